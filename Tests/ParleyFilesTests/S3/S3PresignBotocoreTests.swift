import Foundation
import ParleyHTTPClient
import ParleyTestSupport
import Testing

@testable import ParleyFiles

/// moto cannot check presigned URLs (see `S3BlobStorageMotoTests`), so this compares them with botocore's, the
/// AWS SDK for Python that moto installs into the same virtualenv, at one fixed time: same path, same query
/// parameters, same signature.
@Suite(.enabled(if: MotoServer.python != nil, "no Python next to moto_server (see MotoServer)"))
struct S3PresignBotocoreTests {
    static let script = #"""
        import sys, datetime
        from unittest import mock
        import botocore.auth, botocore.session
        from botocore.config import Config
        endpoint, key, content_type, disposition = sys.argv[1:5]
        client = botocore.session.get_session().create_client(
            "s3", region_name="eu-west-1", endpoint_url=endpoint, aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
            aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
        with mock.patch.object(botocore.auth, "get_current_datetime", return_value=datetime.datetime(2013, 5, 24)):
            print(client.generate_presigned_url("get_object", ExpiresIn=300, Params={
                "Bucket": "parley-files", "Key": key, "ResponseContentType": content_type,
                "ResponseContentDisposition": disposition}))
        """#

    @Test(arguments: [
        ("7/ab/0123456789abcdef", "image/png", "attachment; filename=\"holiday photo.png\""),
        (
            "7/ab/odd key+with~chars$&=@é.bin", "text/plain; charset=utf-8",
            "inline; filename*=UTF-8''h%C3%B6liday.txt"
        ),
    ])
    func presignedURLMatchesBotocore(key: String, contentType: String, disposition: String) async throws {
        let client = HTTPClient()
        defer { client.shutdown() }
        let endpoint = "http://127.0.0.1:9000"
        let storage = try S3BlobStorage(
            configuration: S3Configuration(
                endpoint: endpoint, region: "eu-west-1", bucket: "parley-files",
                accessKeyID: "AKIAIOSFODNN7EXAMPLE",
                secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            client: client, now: { 1_369_353_600 })
        let ours = try #require(
            try storage.download(
                key: key, expiresAt: 1_369_353_600 + 300, contentType: contentType,
                contentDisposition: disposition
            ).redirectURL)

        let directory = NSTemporaryDirectory() + "parley-botocore-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.script.write(toFile: directory + "/presign.py", atomically: true, encoding: .utf8)
        let python = try ChildProcess(
            executable: try #require(MotoServer.python),
            arguments: [directory + "/presign.py", endpoint, key, contentType, disposition],
            outputPath: directory + "/out.txt")
        let status = await python.waitForExit()
        let output = python.output().trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(status == 0, "botocore failed: \(output)")

        let (ourPath, ourQuery) = split(ours)
        let (theirPath, theirQuery) = split(output)
        #expect(ourPath == theirPath)
        #expect(ourQuery == theirQuery)
        #expect(ourQuery.contains { $0.hasPrefix("X-Amz-Signature=") })
    }

    /// The part before `?`, and the query's `name=value` items (order aside: both sort them, but need not).
    private func split(_ url: String) -> (String, Set<String>) {
        let parts = url.split(separator: "?", maxSplits: 1).map(String.init)
        return (parts[0], Set((parts.count > 1 ? parts[1] : "").split(separator: "&").map(String.init)))
    }
}
