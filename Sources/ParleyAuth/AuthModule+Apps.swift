import ParleyHTTP

/// What later features need of auth besides `authenticator`: the app a request names, and the app that
/// signed a server-to-server request.
extension AuthModule {
    /// The app named by the request's `X-App-Key` (from memory; the database only for an app created a moment
    /// ago on another instance): 1039 when the header is missing or the key unknown.
    public func requireApp(of request: HTTPRequest) async throws -> AppSettings {
        try await services.apps.requireApp(of: request)
    }

    /// The app whose secret signed `request` (see `RequestSignature`): 1039 for an unknown or missing app key,
    /// 1038 for a bad signature, a stale `X-Timestamp` or a reused `X-Nonce`.
    public func verifySignedRequest(_ request: HTTPRequest) async throws -> AppSettings {
        try await services.signatures.verify(request)
    }
}
