import Foundation
import Glibc
import ParleyCrypto
import ParleyHTTP
import Testing

@testable import ParleyFiles

@Suite struct SpoolWriterTests {
    private func makeDirectory() throws -> String {
        var template = Array("/tmp/parley-spool-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        try #require(made != nil)
        return String(cString: template)
    }

    private func entries(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
    }

    @Test func theSpoolFileIsCreatedWithTheFirstByteNotBefore() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let spool = SpoolWriter(directory: directory)
        // An upload that has sent nothing yet (or only its headers) holds no file and no descriptor.
        #expect(try entries(directory).isEmpty)
        try await spool.append([], limit: 100)
        #expect(try entries(directory).isEmpty)
        #expect(!spool.isOpen)
        try await spool.append(Array("hello".utf8), limit: 100)
        #expect(spool.isOpen)
        #expect(try entries(directory).count == 1)
        let content = try await spool.finish()
        #expect(content.size == 5)
        #expect(content.sha256Hex == Hex.encode(SHA256.hash(Array("hello".utf8))))
        #expect(try String(contentsOfFile: content.path, encoding: .utf8) == "hello")
        unlink(content.path)
    }

    @Test func discardingASpoolThatGotNoByteLeavesNothing() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let never = SpoolWriter(directory: directory)
        never.discard()
        let used = SpoolWriter(directory: directory)
        try await used.append([1, 2, 3], limit: 100)
        #expect(try entries(directory).count == 1)
        used.discard()
        #expect(try entries(directory).isEmpty)
    }

    @Test func aSpoolThatCannotBeCreatedAnswersStorageUnavailableAtTheFirstByte() async throws {
        let spool = SpoolWriter(directory: "/nonexistent/parley-spool")
        do {
            try await spool.append([1], limit: 100)
            Issue.record("the append should have failed")
        } catch let error as APIError {
            #expect(error.code == 1308)
        }
    }
}
