import ParleyHTTP

/// Finds apps by key or id: from `AppDirectory` (memory), falling back to the database for an app created a
/// moment ago on another machine (before the NOTIFY or the poll brought it here).
final class AppResolver: Sendable {
    let directory: AppDirectory
    let repository: AppRepository

    init(directory: AppDirectory, repository: AppRepository) {
        self.directory = directory
        self.repository = repository
    }

    func app(key: String) async throws -> AppSettings? {
        if let app = directory.app(key: key) { return app }
        // Keys have a fixed shape; anything else cannot exist, so it costs no query.
        guard key.hasPrefix("ak_"), key.utf8.count <= 64 else { return nil }
        guard let app = try await repository.find(key: key) else { return nil }
        directory.upsert(app)
        return app
    }

    func app(id: Int64) async throws -> AppSettings? {
        if let app = directory.app(id: id) { return app }
        guard let app = try await repository.find(id: id) else { return nil }
        directory.upsert(app)
        return app
    }

    /// The app named by the request's `X-App-Key` header: 1039 when it is missing or unknown.
    func requireApp(of request: HTTPRequest) async throws -> AppSettings {
        guard let key = request.headers["x-app-key"], !key.isEmpty else {
            throw APIError.unknownAppKey.with(message: "missing X-App-Key header")
        }
        guard let app = try await app(key: key) else { throw APIError.unknownAppKey }
        return app
    }
}
