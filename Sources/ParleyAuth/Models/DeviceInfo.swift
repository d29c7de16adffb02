/// The device a session is opened from, as the client describes it.
public struct DeviceInfo: Sendable, Hashable {
    /// Lower-case platform name (ios, android, web, desktop, ...); the session policy groups by it.
    public var platform: String
    public var deviceId: String
    public var deviceModel: String
    /// The client address (after trusted-proxy resolution), for the session list.
    public var ipAddress: String
    /// The language the device asked for at login (texts the server writes for it).
    public var language: SessionLanguage

    public init(
        platform: String, deviceId: String = "", deviceModel: String = "", ipAddress: String = "",
        language: SessionLanguage = .en
    ) {
        self.platform = platform
        self.deviceId = deviceId
        self.deviceModel = deviceModel
        self.ipAddress = ipAddress
        self.language = language
    }
}
