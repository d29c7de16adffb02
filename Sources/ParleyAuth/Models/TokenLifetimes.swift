/// Effective token lifetimes for one app.
public struct TokenLifetimes: Sendable, Hashable {
    public var access: Int
    public var refresh: Int
    public var im: Int

    public init(access: Int, refresh: Int, im: Int) {
        self.access = access
        self.refresh = refresh
        self.im = im
    }

    func applying(_ app: AppSettings) -> TokenLifetimes {
        TokenLifetimes(
            access: app.accessTokenTTL ?? access, refresh: app.refreshTokenTTL ?? refresh,
            im: app.imTokenTTL ?? im)
    }
}
