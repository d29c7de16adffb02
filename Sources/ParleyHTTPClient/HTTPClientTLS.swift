/// TLS settings of a client, for `https://` URLs.
public struct HTTPClientTLS: Sendable {
    /// PEM file of the certificate authorities to trust instead of the system's.
    public var caFile: String?
    /// Verify the server's certificate chain and name. Only tests may turn it off.
    public var verifyPeer: Bool
    /// PEM client certificate and its key (APNs certificate-based authentication).
    public var clientCertificateFile: String?
    public var clientKeyFile: String?

    public init(
        caFile: String? = nil, verifyPeer: Bool = true, clientCertificateFile: String? = nil,
        clientKeyFile: String? = nil
    ) {
        self.caFile = caFile
        self.verifyPeer = verifyPeer
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
    }
}
