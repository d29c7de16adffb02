import Glibc

/// A request body as curl's read callback pulls it: from memory, or from a file read piece by piece with
/// `pread`, so a large upload never sits in memory. Client thread only.
struct UploadSource {
    enum ReadResult: Equatable {
        case bytes(Int)
        case failed(String)
    }

    private enum Storage {
        case empty
        case bytes([UInt8])
        case file(descriptor: Int32, path: String, offset: Int64)
    }

    private var storage: Storage
    private let length: Int64
    private var position: Int64 = 0

    static let none = UploadSource(storage: .empty, length: 0)

    private init(storage: Storage, length: Int64) {
        self.storage = storage
        self.length = length
    }

    /// Opens a file body and checks that it holds the promised range.
    init(_ body: HTTPClientBody) throws(HTTPClientError) {
        switch body {
        case .none:
            self.init(storage: .empty, length: 0)
        case .bytes(let bytes):
            self.init(storage: .bytes(bytes), length: Int64(bytes.count))
        case .file(let path, let offset, let length):
            guard offset >= 0, length >= 0 else { throw .invalidRequest("negative file range for \(path)") }
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .bodyUnreadable("open \(path): \(Self.errnoText())") }
            var info = stat()
            guard fstat(descriptor, &info) == 0, Int64(info.st_size) >= offset + length else {
                Glibc.close(descriptor)
                throw .bodyUnreadable("\(path) is shorter than \(offset + length) bytes")
            }
            self.init(storage: .file(descriptor: descriptor, path: path, offset: offset), length: length)
        }
    }

    /// Copies the next bytes into `buffer`; `.bytes(0)` at the end of the body.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        let count = Int(min(Int64(buffer.count), length - position))
        guard count > 0 else { return .bytes(0) }
        switch storage {
        case .empty:
            return .bytes(0)
        case .bytes(let bytes):
            let start = Int(position)
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
            }
            position += Int64(count)
            return .bytes(count)
        case .file(let descriptor, let path, let offset):
            while true {
                let read = pread(descriptor, buffer.baseAddress, count, off_t(offset + position))
                if read < 0 && errno == EINTR { continue }
                if read < 0 { return .failed("read \(path): \(Self.errnoText())") }
                // Returning 0 early would make curl wait for a body the server never gets in full.
                if read == 0 { return .failed("\(path) ended after \(position) of \(length) bytes") }
                position += Int64(read)
                return .bytes(read)
            }
        }
    }

    /// Moves to `offset` within the body (curl rewinds to resend on a new connection).
    mutating func seek(to offset: Int64) -> Bool {
        guard offset >= 0, offset <= length else { return false }
        position = offset
        return true
    }

    /// Closes the file, if any; reading afterwards reads nothing.
    mutating func close() {
        if case .file(let descriptor, _, _) = storage { Glibc.close(descriptor) }
        storage = .empty
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
