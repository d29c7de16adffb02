/// Per-app token lifetimes in seconds; nil fields fall back to the server-wide defaults.
public struct TokenLifetimeOverrides: Sendable, Hashable {
    public var access: Int?
    public var refresh: Int?
    public var im: Int?

    public init(access: Int? = nil, refresh: Int? = nil, im: Int? = nil) {
        self.access = access
        self.refresh = refresh
        self.im = im
    }
}
