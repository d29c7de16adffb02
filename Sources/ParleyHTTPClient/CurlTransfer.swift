import CCurl
import Glibc

typealias ResponseContinuation = CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>

/// A request handed to the client thread.
struct SubmittedRequest: Sendable {
    let id: UInt64
    let request: HTTPClientRequest
    let continuation: ResponseContinuation
}

/// One request in flight: its easy handle and everything curl's callbacks write into. Created, driven and freed
/// on the client thread only; curl gets an unretained pointer to it, kept alive by the loop's table of transfers.
final class CurlTransfer {
    let id: UInt64
    let easy: UnsafeMutableRawPointer
    private let continuation: ResponseContinuation
    private let maxResponseBytes: Int
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var upload: UploadSource
    private var responseHeaders: [(String, String)] = []
    private var responseBody: [UInt8] = []
    private var exceededLimit = false
    private var uploadError: String?
    private var completed = false
    private let connectPolicy: (@Sendable (ConnectAddress) -> Bool)?
    /// Addresses the policy refused, for the error message.
    private var refusedAddresses: [ConnectAddress] = []

    /// Creates and configures the easy handle; throws when the request cannot be sent as given.
    init(_ submitted: SubmittedRequest, maxResponseBytes: Int, tls: HTTPClientTLS) throws(HTTPClientError) {
        guard let easy = curl_easy_init() else {
            throw .transport(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_easy_init failed")
        }
        self.id = submitted.id
        self.easy = easy
        self.continuation = submitted.continuation
        self.maxResponseBytes = maxResponseBytes
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        self.upload = .none
        self.connectPolicy = submitted.request.connectPolicy
        // From here on `deinit` frees the handle, the header list and the file, whatever fails below.
        upload = try UploadSource(submitted.request.body)
        try configure(submitted.request, tls: tls)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        upload.close()
    }

    /// Resumes the caller with `result`; later calls are ignored.
    func complete(_ result: Result<HTTPClientResponse, HTTPClientError>) {
        guard !completed else { return }
        completed = true
        upload.close()
        continuation.resume(returning: result)
    }

    /// Resumes the caller with what curl's `code` means for this transfer.
    func finish(code: CURLcode) {
        guard code == CURLE_OK else {
            complete(.failure(error(for: code)))
            return
        }
        var status = 0
        _ = parley_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var version = 0
        _ = parley_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        let httpVersion: HTTPClientResponse.HTTPVersion =
            switch version {
            case CURL_HTTP_VERSION_1_0: .http1_0
            case CURL_HTTP_VERSION_1_1: .http1_1
            case CURL_HTTP_VERSION_2_0: .http2
            case CURL_HTTP_VERSION_3: .http3
            default: .unknown
            }
        complete(
            .success(
                HTTPClientResponse(
                    status: status, headers: responseHeaders, body: responseBody,
                    httpVersion: httpVersion)))
    }

    // MARK: Configuration

    private func configure(_ request: HTTPClientRequest, tls: HTTPClientTLS) throws(HTTPClientError) {
        try check(parley_curl_easy_setopt_string(easy, CURLOPT_URL, request.url))
        // Restricting schemes keeps a URL from reaching curl's other protocols (file://, gopher://, ...).
        try check(parley_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        // Signals are useless (and unsafe) for a library running on its own thread.
        try check(parley_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        try check(parley_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
        try check(parley_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout)))
        // Refuses an announced oversized body before it arrives. Not for HEAD: curl applies it to the
        // Content-Length of the body a HEAD response describes but does not carry.
        if request.method != "HEAD" {
            try check(parley_curl_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxResponseBytes)))
        }

        switch request.httpVersion {
        case .http1_1:
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1))
        case .http2TLS:
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS))
            // Wait for a connection that may multiplex rather than opening one per concurrent request.
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        case .http2PriorKnowledge:
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
            if CurlGlobal.multiplexesPriorKnowledge {
                try check(parley_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
            } else {
                // libcurl before 8.0 fails a request on a reused prior-knowledge connection with "Error in the
                // HTTP2 framing layer" (curl issue 10634, fixed by PR 10643); one connection per request is slow
                // but correct. Debian 12 ships 7.88.1.
                try check(parley_curl_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1))
                try check(parley_curl_easy_setopt_long(easy, CURLOPT_FORBID_REUSE, 1))
            }
        }
        if let caFile = tls.caFile { try check(parley_curl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile)) }
        if !tls.verifyPeer {
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0))
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0))
        }
        if let certificate = tls.clientCertificateFile {
            try check(parley_curl_easy_setopt_string(easy, CURLOPT_SSLCERT, certificate))
        }
        if let key = tls.clientKeyFile { try check(parley_curl_easy_setopt_string(easy, CURLOPT_SSLKEY, key)) }
        if let identity = request.clientCertificate {
            // PEM blobs need libcurl 7.71 (Debian 12 has 7.88); the certificate blob is part of what a reused
            // connection must match, so a request never rides a connection authenticated as someone else.
            try check(parley_curl_easy_setopt_string(easy, CURLOPT_SSLCERTTYPE, "PEM"))
            try check(parley_curl_easy_setopt_string(easy, CURLOPT_SSLKEYTYPE, "PEM"))
            try check(
                identity.certificatePEM.withUnsafeBytes { bytes in
                    parley_curl_easy_setopt_blob(easy, CURLOPT_SSLCERT_BLOB, bytes.baseAddress, bytes.count)
                })
            try check(
                identity.privateKeyPEM.withUnsafeBytes { bytes in
                    parley_curl_easy_setopt_blob(easy, CURLOPT_SSLKEY_BLOB, bytes.baseAddress, bytes.count)
                })
        }

        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(
            parley_curl_easy_setopt_write(
                easy, CURLOPT_WRITEFUNCTION,
                { data, size, count, context in
                    Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().received(
                        body: data, size * count)
                }))
        try check(parley_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context))
        try check(
            parley_curl_easy_setopt_write(
                easy, CURLOPT_HEADERFUNCTION,
                { data, size, count, context in
                    Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().received(
                        headerLine: data, size * count)
                }))
        try check(parley_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context))

        if connectPolicy != nil {
            try check(
                parley_curl_easy_setopt_opensocket(
                    easy,
                    { context, purpose, address in
                        guard let context, let address else { return CURL_SOCKET_BAD }
                        return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().openSocket(
                            purpose, address)
                    }))
            try check(parley_curl_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, context))
        }

        try configureMethodAndBody(request, context: context)
        try configureHeaders(request)
    }

    private func configureMethodAndBody(_ request: HTTPClientRequest, context: UnsafeMutableRawPointer)
        throws(HTTPClientError)
    {
        let method = request.method
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else {
            throw .invalidRequest("bad method \(method)")
        }
        let sendsBody = request.body != .none || ["PUT", "POST", "PATCH"].contains(method)
        if method == "HEAD" {
            guard !sendsBody else { throw .invalidRequest("HEAD with a body") }
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1))
        } else if sendsBody {
            // Every body goes through the read callback as an "upload" with a known size, so curl sends
            // Content-Length and can rewind (seek callback) when it retries on a reused connection that died.
            try check(parley_curl_easy_setopt_long(easy, CURLOPT_UPLOAD, 1))
            try check(parley_curl_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.body.length)))
            try check(
                parley_curl_easy_setopt_read(
                    easy,
                    { buffer, size, count, context in
                        Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().fillUpload(
                            buffer, size * count)
                    }))
            try check(parley_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, context))
            try check(
                parley_curl_easy_setopt_seek(
                    easy,
                    { context, offset, origin in
                        Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().seekUpload(offset, origin)
                    }))
            try check(parley_curl_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, context))
            if method != "PUT" {
                try check(parley_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method))
            }
        } else if method != "GET" {
            try check(parley_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method))
        }
    }

    private func configureHeaders(_ request: HTTPClientRequest) throws(HTTPClientError) {
        var lines: [String] = []
        var hasExpect = false
        for (name, value) in request.headers {
            // A CR or LF would let a value start a header field of its own (request splitting).
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte),
                !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
            else { throw .invalidRequest("bad header field \(name)") }
            if name.lowercased() == "expect" { hasExpect = true }
            // curl drops "Name:" (it means "remove curl's own field"); "Name;" sends the field empty.
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        // curl asks for 100-continue before bodies over 1 MiB and then waits up to a second for servers that
        // do not answer it; the callers here send bodies they expect to be accepted.
        if !hasExpect && request.body != .none { lines.append("Expect:") }
        for line in lines {
            guard let list = curl_slist_append(headerList, line) else {
                throw .transport(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_slist_append failed")
            }
            headerList = list
        }
        if let headerList {
            try check(parley_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))
        }
    }

    private func check(_ code: CURLcode) throws(HTTPClientError) {
        guard code == CURLE_OK else { throw error(for: code) }
    }

    // MARK: Callbacks (client thread, inside curl_multi_perform)

    private func received(body data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard count > 0, let data else { return count }
        guard responseBody.count + count <= maxResponseBytes else {
            exceededLimit = true
            return 0 // anything but `count` makes curl fail the transfer with CURLE_WRITE_ERROR
        }
        responseBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: count))
        return count
    }

    private func received(headerLine data: UnsafeMutablePointer<CChar>?, _ count: Int) -> Int {
        guard let data else { return count }
        let line = UnsafeRawBufferPointer(start: data, count: count)
        // Each status line starts a response; the fields of an interim one (100 Continue) are dropped.
        if line.starts(with: "HTTP/".utf8) {
            responseHeaders.removeAll(keepingCapacity: true)
            return count
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return count }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        var valueBytes = line[(colon + 1)...]
        while let first = valueBytes.first, first == 0x20 || first == 0x09 { valueBytes = valueBytes.dropFirst() }
        while let last = valueBytes.last, last == 0x20 || last == 0x09 || last == 0x0D || last == 0x0A {
            valueBytes = valueBytes.dropLast()
        }
        responseHeaders.append((name, String(decoding: valueBytes, as: UTF8.self)))
        return count
    }

    /// Opens the socket curl asked for, unless the request's policy refuses the address it is for.
    private func openSocket(_ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        var raw = [UInt8](repeating: 0, count: 16)
        let length = Int(parley_curl_sockaddr_ip(address, &raw))
        guard length == 4 || length == 16, let connectPolicy else { return CURL_SOCKET_BAD }
        let ip = ConnectAddress(bytes: Array(raw[0..<length]))
        guard connectPolicy(ip) else {
            refusedAddresses.append(ip)
            return CURL_SOCKET_BAD
        }
        return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    }

    private func fillUpload(_ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
        guard let buffer else { return 0 }
        switch upload.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity)) {
        case .bytes(let count):
            return count
        case .failed(let message):
            uploadError = message
            return Int(CURL_READFUNC_ABORT)
        }
    }

    private func seekUpload(_ offset: curl_off_t, _ origin: Int32) -> Int32 {
        guard origin == SEEK_SET, upload.seek(to: Int64(offset)) else { return CURL_SEEKFUNC_CANTSEEK }
        return CURL_SEEKFUNC_OK
    }

    // MARK: Errors

    private func error(for code: CURLcode) -> HTTPClientError {
        let buffered = String(cString: errorBuffer)
        let message = buffered.isEmpty ? String(cString: curl_easy_strerror(code)) : buffered
        if exceededLimit { return .responseTooLarge(limit: maxResponseBytes) }
        if let uploadError { return .bodyUnreadable(uploadError) }
        if !refusedAddresses.isEmpty && code == CURLE_COULDNT_CONNECT {
            return .connectFailed("address not allowed: " + refusedAddresses.map(\.description).joined(separator: ", "))
        }
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_BAD_FUNCTION_ARGUMENT:
            return .invalidRequest(message)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return .connectFailed(message)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(message)
        case CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge(limit: maxResponseBytes)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tls(message)
        default:
            return .transport(code: Int(code.rawValue), message: message)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        // 0 would mean "no timeout" to curl.
        return max(1, Int(clamping: seconds &* 1000 &+ attoseconds / 1_000_000_000_000_000))
    }

    /// RFC 9110 section 5.6.2 token characters.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
