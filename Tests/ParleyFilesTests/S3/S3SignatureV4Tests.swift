import ParleyCrypto
import Testing

@testable import ParleyFiles

/// SigV4 against the examples in AWS's S3 documentation ("Signature Calculations for the Authorization Header:
/// Transferring Payload in a Single Chunk" and "Authenticating Requests: Using Query Parameters"), which all use
/// these credentials, bucket and time.
@Suite struct S3SignatureV4Tests {
    static let signer = AWSSignatureV4(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE",
        secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
    /// 2013-05-24T00:00:00Z.
    static let time = AWSTimestamp(unixSeconds: 1_369_353_600)
    static let host = "examplebucket.s3.amazonaws.com"

    @Test func timestampFormats() {
        #expect(Self.time.amzDate == "20130524T000000Z")
        #expect(Self.time.dateStamp == "20130524")
        #expect(AWSTimestamp(unixSeconds: 0).amzDate == "19700101T000000Z")
        #expect(AWSTimestamp(unixSeconds: 1_798_761_599).amzDate == "20261231T235959Z")
    }

    @Test func getObjectExample() {
        let request = AWSRequest(method: "GET", host: Self.host, path: "/test.txt", headers: [("Range", "bytes=0-9")])
        let headers = Self.signer.signedHeaders(
            for: request, payloadHash: AWSSignatureV4.emptyPayloadHash, at: Self.time)
        #expect(
            authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
                + "aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(headers.contains { $0 == ("Host", Self.host) })
        #expect(headers.contains { $0 == ("x-amz-date", "20130524T000000Z") })
        #expect(headers.contains { $0 == ("x-amz-content-sha256", AWSSignatureV4.emptyPayloadHash) })
    }

    @Test func getObjectExampleIntermediateSteps() {
        let canonical = AWSSignatureV4.canonicalRequest(
            method: "GET", path: "/test.txt", query: [],
            canonicalHeaders: AWSSignatureV4.canonicalHeaders([
                ("Host", Self.host), ("Range", "bytes=0-9"), ("x-amz-content-sha256", AWSSignatureV4.emptyPayloadHash),
                ("x-amz-date", "20130524T000000Z"),
            ]),
            payloadHash: AWSSignatureV4.emptyPayloadHash)
        #expect(
            canonical == """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        #expect(
            Self.signer.stringToSign(canonicalRequest: canonical, at: Self.time) == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """)
    }

    @Test func putObjectExampleEncodesTheKey() {
        let request = AWSRequest(
            method: "PUT", host: Self.host, path: "/test$file.text",
            headers: [
                ("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
            ])
        let payloadHash = Hex.encode(SHA256.hash(Array("Welcome to Amazon S3.".utf8)))
        #expect(payloadHash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let headers = Self.signer.signedHeaders(for: request, payloadHash: payloadHash, at: Self.time)
        #expect(
            authorization(headers)?.hasSuffix(
                "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
                    + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd") == true)
        #expect(request.url == "https://examplebucket.s3.amazonaws.com/test%24file.text")
    }

    @Test func getBucketLifecycleExampleSignsAParameterWithoutValue() {
        let request = AWSRequest(method: "GET", host: Self.host, path: "/", query: [("lifecycle", "")])
        let headers = Self.signer.signedHeaders(
            for: request, payloadHash: AWSSignatureV4.emptyPayloadHash, at: Self.time)
        #expect(
            authorization(headers)?.hasSuffix(
                "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543") == true)
        #expect(request.url == "https://examplebucket.s3.amazonaws.com/?lifecycle=")
    }

    @Test func listObjectsExampleSortsTheQuery() {
        let request = AWSRequest(
            method: "GET", host: Self.host, path: "/", query: [("prefix", "J"), ("max-keys", "2")])
        let headers = Self.signer.signedHeaders(
            for: request, payloadHash: AWSSignatureV4.emptyPayloadHash, at: Self.time)
        #expect(
            authorization(headers)?.hasSuffix(
                "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == true)
        #expect(request.url == "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J")
    }

    @Test func presignedURLExample() {
        let request = AWSRequest(method: "GET", host: Self.host, path: "/test.txt")
        #expect(
            Self.signer.presignedURL(for: request, expires: 86400, at: Self.time)
                == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test func presignedExpiryIsClampedToOneSecondToSevenDays() {
        let request = AWSRequest(method: "GET", host: Self.host, path: "/test.txt")
        #expect(
            Self.signer.presignedURL(for: request, expires: 10_000_000, at: Self.time).contains("X-Amz-Expires=604800&")
        )
        #expect(Self.signer.presignedURL(for: request, expires: -5, at: Self.time).contains("X-Amz-Expires=1&"))
    }

    @Test func derivesTheSigningKeyOfAWSsExample() {
        // "Examples of how to derive a signing key for Signature Version 4".
        let signer = AWSSignatureV4(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            region: "us-east-1", service: "iam")
        #expect(
            Hex.encode(signer.signingKey(at: AWSTimestamp(unixSeconds: 1_329_264_000)))
                == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
    }

    @Test func sessionTokenIsSentAndSigned() {
        let signer = AWSSignatureV4(
            accessKeyID: "AKID", secretAccessKey: "secret", region: "eu-west-1",
            sessionToken: "token/with+chars")
        let request = AWSRequest(method: "GET", host: Self.host, path: "/k")
        let headers = signer.signedHeaders(for: request, payloadHash: AWSSignatureV4.unsignedPayload, at: Self.time)
        #expect(headers.contains { $0 == ("x-amz-security-token", "token/with+chars") })
        #expect(
            authorization(headers)?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,")
                == true)
        #expect(
            signer.presignedURL(for: request, expires: 60, at: Self.time).contains(
                "X-Amz-Security-Token=token%2Fwith%2Bchars&"))
    }

    @Test func uriEncodingKeepsUnreservedAndSlashesInPathsOnly() {
        #expect(AWSURIEncoding.path("/a b/c+d~e_f.g-h/é/$&=?#") == "/a%20b/c%2Bd~e_f.g-h/%C3%A9/%24%26%3D%3F%23")
        #expect(AWSURIEncoding.path("") == "/")
        // S3 keys are not normalised: empty and dot segments stay.
        #expect(AWSURIEncoding.path("/b//./k") == "/b//./k")
        #expect(AWSURIEncoding.encode("a/b c*") == "a%2Fb%20c%2A")
    }

    @Test func queryIsEncodedThenSortedByNameThenValue() {
        let query = [
            ("b", "2"), ("a", "z"), ("a", "1"), ("A", "x"),
            ("response-content-disposition", "attachment; filename=\"a b.png\""),
        ]
        #expect(
            AWSURIEncoding.canonicalQuery(query)
                == "A=x&a=1&a=z&b=2&response-content-disposition=attachment%3B%20filename%3D%22a%20b.png%22")
    }

    @Test func canonicalHeadersTrimCollapseAndMerge() {
        let canonical = AWSSignatureV4.canonicalHeaders([
            ("X-Amz-Meta-A", "  one   two  "), ("Host", "h"), ("x-amz-meta-a", "three"),
        ])
        #expect(canonical.block == "host:h\nx-amz-meta-a:one two,three\n")
        #expect(canonical.names == "host;x-amz-meta-a")
    }

    private func authorization(_ headers: [(String, String)]) -> String? {
        headers.first { $0.0 == "Authorization" }?.1
    }
}
