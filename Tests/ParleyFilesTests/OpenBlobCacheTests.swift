import Glibc
import ParleyHTTP
import Testing

@testable import ParleyFiles

@Suite struct OpenBlobCacheTests {
    private func makeFile(_ contents: String) throws -> String {
        var template = Array("/tmp/parley-open-blob-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        let bytes = Array(contents.utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count)
        close(fd)
        return String(cString: template)
    }

    private func read(_ handle: FileDescriptorHandle, count: Int) -> String {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = pread(handle.descriptor, &buffer, count, 0)
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }

    @Test func aHitSharesTheOpenDescriptor() throws {
        let path = try makeFile("hello")
        defer { unlink(path) }
        let cache = OpenBlobCache()
        let first = try #require(cache.handle(key: "k", path: path))
        let second = try #require(cache.handle(key: "k", path: path))
        #expect(first === second)
        #expect(read(second, count: 5) == "hello")
    }

    @Test func aResponseKeepsReadingAfterEvictionAndDeletion() throws {
        let path = try makeFile("still here")
        let cache = OpenBlobCache()
        let held = try #require(cache.handle(key: "k", path: path))
        cache.remove(key: "k")
        unlink(path)
        // The cache let go and the file is unlinked, but the response's hold keeps the descriptor open.
        #expect(read(held, count: 10) == "still here")
        #expect(cache.handle(key: "k", path: path) == nil)
    }

    @Test func staysBoundedInCount() throws {
        let path = try makeFile("x")
        defer { unlink(path) }
        let cache = OpenBlobCache(maxEntries: 8)
        var held: [FileDescriptorHandle] = []
        for index in 0..<100 {
            held.append(try #require(cache.handle(key: "k\(index)", path: path)))
        }
        #expect(cache.count <= 8)
        #expect(held.allSatisfy { read($0, count: 1) == "x" })
    }
}
