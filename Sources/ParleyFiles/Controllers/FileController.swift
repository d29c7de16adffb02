import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// `POST /api/files` (multipart), `PUT /api/files` (raw body), `POST /api/files/urls`, and the signed download
/// `GET /files/{objectKey}` (no bearer token: image loaders fetch it directly).
struct FileController: Sendable {
    let authenticator: Authenticator
    let configuration: FilesConfiguration
    let uploads: UploadService
    let urls: FileURLService
    let downloads: DownloadService

    /// Thumbnails are small by nature; a multipart body may carry a few form fields besides the files.
    static let maxThumbnailBytes: Int64 = 10 << 20
    static let multipartOverheadBytes = 64 * 1024

    func register(on router: inout Router) {
        let uploadOptions = RouteOptions(
            bodyLimit: Int(configuration.maxUploadBytes + Self.maxThumbnailBytes) + Self.multipartOverheadBytes,
            streamBody: true)
        let controller = self
        router.post(
            "/api/files", options: uploadOptions,
            authenticator.protect { request, _, principal in
                try await controller.uploadMultipart(request, principal: principal)
            })
        router.put(
            "/api/files", options: uploadOptions,
            authenticator.protect { request, _, principal in
                try await controller.uploadRaw(request, principal: principal)
            })
        let urls = urls
        router.post(
            "/api/files/urls", options: RouteOptions(bodyLimit: 64 * 1024),
            authenticator.protect { request, _, principal in
                struct Body: Decodable { var objectKeys: [String]; var ttl: Int?; var disposition: String? }
                let body = try request.decodeJSON(Body.self)
                return .ok(
                    try await urls.sign(
                        objectKeys: body.objectKeys, ttlSeconds: body.ttl, appId: principal.appId,
                        userId: principal.userId, baseURL: Self.baseURL(of: request), disposition: body.disposition))
            })
        let downloads = downloads
        // Every answer of the route, errors included, carries `DownloadSafety.headers`; the download's own answers
        // carry them among their fixed fields.
        router.get(
            "/files/{objectKey...}",
            immediate: { request, context in
                do {
                    return try downloads.serveImmediately(request)
                } catch {
                    return DownloadSafety.error(mapping: error, logger: context.logger)
                }
            }
        ) { request, context in
            do {
                return try await downloads.serve(request)
            } catch {
                return DownloadSafety.error(mapping: error, logger: context.logger)
            }
        }
    }

    static func baseURL(of request: HTTPRequest) -> String {
        "http://" + (request.headers["host"] ?? "localhost")
    }

    // MARK: Uploads

    /// The body as it arrives; the server's 413 on the route limit becomes the file service's own code.
    private func chunks(of request: HTTPRequest) throws -> RequestBodyStream {
        guard case .stream(let stream) = request.body else { throw APIError.malformedUpload }
        return stream
    }

    private func uploadRaw(_ request: HTTPRequest, principal: Principal) async throws -> HTTPResponse {
        let stream = try chunks(of: request)
        try uploads.admit(appId: principal.appId, userId: principal.userId)
        let limits = try await uploads.limits(appId: principal.appId, userId: principal.userId)
        if let length = request.headers["content-length"].flatMap(Int64.init) {
            if length > limits.maxFileBytes { throw Self.tooLarge(limits) }
            if let kind = limits.quota.exceeded(adding: length, newContent: false) {
                throw uploads.refuse(kind, limits.quota)
            }
        }
        let name = UploadService.cleanName(Self.rawFileName(request.headers))
        let spool = uploads.spool()
        let spoolLimit = Self.spoolLimit(limits.maxFileBytes, limits)
        do {
            for try await chunk in stream { try await spool.append(chunk, limit: spoolLimit) }
            guard spool.size > 0 else { throw APIError.malformedUpload.with(message: "the file is empty") }
            let content = try await spool.finish()
            let file = ReceivedFile(content: content, name: name, declaredType: request.headers["content-type"])
            return .ok(
                try await uploads.commit(
                    appId: principal.appId, ownerId: principal.userId, file: file,
                    thumbnail: nil, limits: limits, baseURL: Self.baseURL(of: request)),
                status: 201)
        } catch {
            spool.discard()
            throw mapped(error, limits)
        }
    }

    private func uploadMultipart(_ request: HTTPRequest, principal: Principal) async throws -> HTTPResponse {
        let stream = try chunks(of: request)
        guard let contentType = request.headers["content-type"],
            let boundary = MultipartParser.boundary(fromContentType: contentType)
        else {
            throw APIError.unsupportedMediaType.with(message: "expected multipart/form-data with a boundary")
        }
        try uploads.admit(appId: principal.appId, userId: principal.userId)
        let limits = try await uploads.limits(appId: principal.appId, userId: principal.userId)
        // The body's length less what a form may carry besides its files: at least what the files will add.
        if let length = request.headers["content-length"].flatMap(Int64.init),
            let kind = limits.quota.exceeded(adding: length - Int64(Self.multipartOverheadBytes), newContent: false)
        {
            throw uploads.refuse(kind, limits.quota)
        }
        var parser = MultipartParser(boundary: boundary)
        var spools: [SpoolWriter] = []
        var current: (role: String, spool: SpoolWriter?, limit: Int64)?
        var received: [String: ReceivedFile] = [:]
        var pendingHead: MultipartPartHead?
        do {
            func handle(_ events: [MultipartEvent]) async throws {
                for event in events {
                    switch event {
                    case .partBegin(let head):
                        guard head.name == "file" || head.name == "thumbnail" else {
                            current = ("ignored", nil, 0)
                            continue
                        }
                        guard received[head.name] == nil else {
                            throw APIError.malformedUpload.with(message: "more than one `\(head.name)` part")
                        }
                        let spool = uploads.spool()
                        spools.append(spool)
                        pendingHead = head
                        current = (
                            head.name, spool,
                            Self.spoolLimit(
                                head.name == "file"
                                    ? limits.maxFileBytes : min(limits.maxFileBytes, Self.maxThumbnailBytes),
                                limits)
                        )
                    case .partData(let bytes):
                        if let current, let spool = current.spool {
                            try await spool.append(bytes, limit: current.limit)
                        }
                    case .partEnd:
                        if let part = current, let spool = part.spool, let head = pendingHead {
                            guard spool.size > 0 else {
                                throw APIError.malformedUpload.with(message: "the `\(part.role)` part is empty")
                            }
                            received[part.role] = ReceivedFile(
                                content: try await spool.finish(),
                                name: UploadService.cleanName(head.filename),
                                declaredType: head.contentType)
                        }
                        current = nil
                        pendingHead = nil
                    case .end:
                        break
                    }
                }
            }
            for try await chunk in stream { try await handle(try parser.feed(chunk)) }
            try parser.finish()
            guard let file = received["file"] else {
                throw APIError.malformedUpload.with(message: "the form has no `file` part")
            }
            return .ok(
                try await uploads.commit(
                    appId: principal.appId, ownerId: principal.userId, file: file,
                    thumbnail: received["thumbnail"], limits: limits,
                    baseURL: Self.baseURL(of: request)), status: 201)
        } catch {
            for spool in spools { spool.discard() }
            throw mapped(error, limits)
        }
    }

    /// `X-File-Name` (percent-encoded UTF-8 allowed), else `Content-Disposition`'s filename.
    static func rawFileName(_ headers: HTTPHeaders) -> String? {
        if let name = headers["x-file-name"] { return PercentDecoding.decode(name) ?? name }
        if let disposition = headers["content-disposition"] {
            return MultipartPartHead.filename(fromDisposition: disposition)
        }
        return nil
    }

    static func tooLarge(_ limits: FileLimits) -> APIError {
        APIError.fileTooLarge.with(message: "files may be at most \(limits.maxFileBytes) bytes in this app")
    }

    /// A part may grow to its size limit or to what the user's quota leaves, whichever is less: an upload without a
    /// length stops at the quota instead of spooling up to the size limit first.
    static func spoolLimit(_ maxBytes: Int64, _ limits: FileLimits) -> Int64 {
        min(maxBytes, limits.quota.remainingUserBytes ?? .max)
    }

    /// Errors of the body's reading as the client sees them; a part past its limit is too large when it passed the
    /// size limit, otherwise over the quota that stopped it.
    func mapped(_ error: any Error, _ limits: FileLimits) -> any Error {
        switch error {
        case let exceeded as FileUploadLimitExceeded:
            guard exceeded.size <= limits.maxFileBytes,
                let kind = limits.quota.exceeded(adding: exceeded.size, newContent: false)
            else {
                return Self.tooLarge(limits) // the size limit (a thumbnail's is lower), not the quota
            }
            return uploads.refuse(kind, limits.quota)
        case let api as APIError where api.code == APIError.payloadTooLarge.code: return Self.tooLarge(limits)
        case let multipart as MultipartError:
            return APIError.malformedUpload.with(message: "malformed multipart body: \(multipart)")
        default: return error
        }
    }
}
