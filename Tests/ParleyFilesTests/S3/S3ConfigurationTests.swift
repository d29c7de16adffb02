import ParleyHTTPClient
import Testing

@testable import ParleyFiles

/// Endpoint parsing, addressing style, presigned downloads and error documents, without a server.
@Suite struct S3ConfigurationTests {
    @Test func endpointsKeepNonDefaultPortsOnly() throws {
        let local = try #require(S3Endpoint("http://127.0.0.1:9000"))
        #expect(local.scheme == "http" && local.host == "127.0.0.1:9000" && local.hostName == "127.0.0.1")
        #expect(
            try #require(S3Endpoint("https://S3.us-east-1.amazonaws.com:443/")).host == "s3.us-east-1.amazonaws.com")
        #expect(try #require(S3Endpoint("http://minio:80")).host == "minio")
        #expect(try #require(S3Endpoint("https://minio:80")).host == "minio:80")
        #expect(try #require(S3Endpoint("http://[::1]:9000")).host == "[::1]:9000")
        #expect(try #require(S3Endpoint("http://[::1]")).host == "[::1]")
    }

    @Test func unusableEndpointsAreRefused() {
        for endpoint in [
            "ftp://host", "host:9000", "http://", "http://host/base", "http://host?x", "http://u@host",
            "http://host:0", "http://host:99999", "http://host:abc",
        ] {
            #expect(S3Endpoint(endpoint) == nil, "\(endpoint)")
        }
    }

    @Test func pathStyleDefaultsToTrueExceptForAWS() {
        #expect(configuration(endpoint: "http://127.0.0.1:9000").pathStyle)
        #expect(!configuration(endpoint: "https://s3.eu-west-1.amazonaws.com").pathStyle)
        #expect(
            S3Configuration(
                endpoint: "https://s3.eu-west-1.amazonaws.com", region: "eu-west-1", bucket: "b",
                accessKeyID: "a", secretAccessKey: "s", pathStyle: true
            ).pathStyle)
    }

    @Test func invalidConfigurationIsRefused() {
        let client = HTTPClient()
        defer { client.shutdown() }
        for config in [
            configuration(endpoint: "s3.amazonaws.com"), configuration(bucket: "Bad_Bucket"),
            configuration(bucket: "ab"), configuration(bucket: "a/b"),
        ] {
            #expect(throws: S3Error.self) { try S3BlobStorage(configuration: config, client: client) }
        }
    }

    @Test func downloadIsAPresignedRedirectWithResponseOverrides() throws {
        let client = HTTPClient()
        defer { client.shutdown() }
        let storage = try S3BlobStorage(
            configuration: configuration(endpoint: "http://127.0.0.1:9000"), client: client,
            now: { 1_369_353_600 })
        let download = try storage.download(
            key: "7/ab/cd", expiresAt: 1_369_353_600 + 300, contentType: "image/png",
            contentDisposition: "attachment; filename=\"a b.png\"")
        let url = try #require(download.redirectURL)
        #expect(url.hasPrefix("http://127.0.0.1:9000/parley-files/7/ab/cd?X-Amz-Algorithm=AWS4-HMAC-SHA256&"))
        #expect(url.contains("&X-Amz-Date=20130524T000000Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host&"))
        #expect(
            url.contains(
                "&response-content-disposition=attachment%3B%20filename%3D%22a%20b.png%22"
                    + "&response-content-type=image%2Fpng&X-Amz-Signature="))

        // Lifetimes are clamped to what S3 accepts: at least a second, at most seven days.
        let expired = try storage.download(key: "k", expiresAt: 0, contentType: "", contentDisposition: "")
        #expect(expired == .redirect(url: signedURL(expires: 1)))
        let distant = try storage.download(
            key: "k", expiresAt: 1_369_353_600 + 30 * 86400, contentType: "",
            contentDisposition: "")
        #expect(distant == .redirect(url: signedURL(expires: 604_800)))
    }

    @Test func presignEndpointAndVirtualHostedStyleShapeTheURL() throws {
        let client = HTTPClient()
        defer { client.shutdown() }
        var config = configuration(endpoint: "http://minio.internal:9000")
        config.presignEndpoint = "https://files.example.com"
        let behindProxy = try S3BlobStorage(configuration: config, client: client)
        let proxied = try behindProxy.download(key: "k", expiresAt: Int64.max, contentType: "", contentDisposition: "")
        let proxiedURL = try #require(proxied.redirectURL)
        #expect(proxiedURL.hasPrefix("https://files.example.com/parley-files/k?"))

        let aws = try S3BlobStorage(
            configuration: configuration(endpoint: "https://s3.eu-west-1.amazonaws.com"), client: client)
        let virtual = try aws.download(key: "a b", expiresAt: Int64.max, contentType: "", contentDisposition: "")
        let virtualURL = try #require(virtual.redirectURL)
        #expect(virtualURL.hasPrefix("https://parley-files.s3.eu-west-1.amazonaws.com/a%20b?"))
    }

    @Test func errorDocumentsBecomeTypedErrors() {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>NoSuchBucket</Code><Message>The bucket &lt;x&gt; &amp; &#65;&#x42; does not exist</Message>\
            <BucketName>x</BucketName><RequestId>4442587FB7D0A2F9</RequestId></Error>
            """
        let response = HTTPClientResponse(status: 404, headers: [], body: Array(body.utf8))
        #expect(
            S3Error.from(response)
                == .service(
                    status: 404, code: "NoSuchBucket",
                    message: "The bucket <x> & AB does not exist",
                    requestID: "4442587FB7D0A2F9"))
        #expect(S3Error.from(HTTPClientResponse(status: 403, headers: [], body: [])) == .unexpectedStatus(403))
    }

    private func configuration(endpoint: String = "http://127.0.0.1:9000", bucket: String = "parley-files")
        -> S3Configuration
    {
        S3Configuration(
            endpoint: endpoint, region: "us-east-1", bucket: bucket, accessKeyID: "AKIAIOSFODNN7EXAMPLE",
            secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    }

    private func signedURL(expires: Int) -> String {
        let signer = AWSSignatureV4(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE",
            secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        return signer.presignedURL(
            for: AWSRequest(method: "GET", scheme: "http", host: "127.0.0.1:9000", path: "/parley-files/k"),
            expires: expires, at: AWSTimestamp(unixSeconds: 1_369_353_600))
    }
}

extension BlobDownload {
    /// The URL of a `.redirect`, nil for a local file.
    var redirectURL: String? {
        if case .redirect(let url) = self { url } else { nil }
    }
}
