import Foundation
import ParleyCrypto
import ParleyFiles
import ParleyHTTP
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Uploads, signed downloads and the rules around them, against a live server.
@Suite(.serialized) struct FileServiceTests {
    @Test func rawUploadRoundTripsWithHashSizeTypeAndHeaders() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let bytes = tinyPNG + patternBytes(70_000)
            let data = try await fx.upload(alice, bytes, name: "../../etc/Holiday Photo.jpeg", type: "image/jpeg")
            let key = try #require(data["objectKey"] as? String)
            #expect(key.hasPrefix("\(fx.messaging.appId)/"))
            #expect(ObjectKey.isValid(key))
            #expect(data["hash"] as? String == Hex.encode(SHA256.hash(bytes)))
            #expect(data["size"] as? Int == bytes.count)
            // Content wins over the declared type and the name: the bytes are a PNG.
            #expect(data["mimeType"] as? String == "image/png")
            #expect(data["ext"] as? String == "png")
            #expect(data["name"] as? String == "Holiday Photo.jpeg")
            #expect(data["urlExpireAt"] is String)
            let url = try #require(data["url"] as? String)
            #expect(url.hasPrefix("http://127.0.0.1:\(fx.live.port)/files/\(key)?exp="))
            let download = try await fx.fetch(url)
            #expect(download.status == 200)
            #expect(download.body == bytes)
            #expect(download.header("content-type") == "image/png")
            #expect(download.header("content-length") == String(bytes.count))
            #expect(download.header("etag") == "\"\(Hex.encode(SHA256.hash(bytes)))\"")
            #expect(download.header("last-modified")?.hasSuffix("GMT") == true)
            #expect(download.header("cache-control")?.hasPrefix("private, max-age=") == true)
            #expect(download.header("accept-ranges") == "bytes")
            #expect(download.header("content-disposition")?.hasPrefix("inline;") == true)
            #expect(download.header("content-disposition")?.contains("Holiday Photo.jpeg") == true)
        }
    }

    @Test func multipartUploadWithThumbnailAndNonASCIIName() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let video =
                Array("\u{0}\u{0}\u{0}\u{18}ftypmp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8)
                + patternBytes(200_000)
            let body = FilesFixture.multipartBody([
                (field: "caption", filename: nil, type: nil, bytes: Array("ignored".utf8)),
                (field: "file", filename: "假期 video.mp4", type: "application/octet-stream", bytes: video),
                (field: "thumbnail", filename: "thumb.png", type: "image/png", bytes: tinyPNG),
            ])
            let response = try await fx.postMultipart(alice, body)
            #expect(response.status == 201, "\(response.text)")
            let data = response.data
            #expect(data["mimeType"] as? String == "video/mp4")
            #expect(data["ext"] as? String == "mp4")
            #expect(data["size"] as? Int == video.count)
            #expect(data["name"] as? String == "假期 video.mp4")
            let thumbnailKey = try #require(data["thumbnailKey"] as? String)
            #expect(thumbnailKey != data["objectKey"] as? String)
            let thumb = try await fx.fetch(try #require(data["thumbnailUrl"] as? String))
            #expect(thumb.status == 200)
            #expect(thumb.body == tinyPNG)
            let file = try await fx.fetch(try #require(data["url"] as? String), headers: [("Range", "bytes=0-99")])
            #expect(file.status == 206)
            #expect(file.body == Array(video[0..<100]))
            let disposition = try await fx.fetch(try #require(data["url"] as? String) + "&download=1", method: "HEAD")
            // download=1 is not part of the signature: the URL still verifies and asks for an attachment.
            #expect(disposition.header("content-disposition")?.hasPrefix("attachment;") == true)
            #expect(disposition.header("content-disposition")?.contains("filename*=UTF-8''%E5%81%87%E6%9C%9F") == true)
        }
    }

    @Test func malformedUploadsAreRefusedAndLeaveNothing() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let noFile = try await fx.postMultipart(
                alice,
                FilesFixture.multipartBody([
                    (field: "caption", filename: nil, type: nil, bytes: Array("x".utf8))
                ]))
            #expect(noFile.status == 400)
            #expect(noFile.code == 1306)
            var truncated = FilesFixture.multipartBody([
                (field: "file", filename: "a.txt", type: nil, bytes: patternBytes(5000))
            ])
            truncated.removeLast(20)
            let cut = try await fx.postMultipart(alice, truncated)
            #expect(cut.status == 400)
            #expect(cut.code == 1306)
            let notMultipart = try await fx.raw(
                "POST", "/api/files",
                headers: [
                    ("Authorization", "Bearer \(alice.accessToken)"), ("Content-Type", "application/json"),
                ], body: Array("{}".utf8))
            #expect(notMultipart.status == 415)
            let empty = try await fx.put(alice, [])
            #expect(empty.status == 400)
            let unauthenticated = try await fx.raw("PUT", "/api/files", body: [1, 2, 3])
            #expect(unauthenticated.status == 401)
            #expect(try await fx.count("SELECT count(*) FROM files") == 0)
            #expect(fx.storedFiles("spool").isEmpty)
            #expect(fx.storedFiles("blobs").isEmpty)
        }
    }

    @Test func identicalContentIsStoredOnceButEachUploadHasItsOwnKeyAndOwner() async throws {
        try await FilesFixture.run { fx in
            let users = try await fx.messaging.users(2)
            let bytes = patternBytes(100_000, seed: 42)
            let first = try await fx.upload(users[0], bytes, name: "a.bin")
            let second = try await fx.upload(users[1], bytes, name: "b.bin")
            #expect(first["objectKey"] as? String != second["objectKey"] as? String)
            #expect(first["hash"] as? String == second["hash"] as? String)
            #expect(try await fx.count("SELECT count(*) FROM file_blobs") == 1)
            #expect(try await fx.count("SELECT count(*) FROM files") == 2)
            #expect(fx.storedFiles("blobs").count == 1)
            // Each owner reads its own upload, not the other's.
            let mine = try await fx.urls(users[1], [second["objectKey"] as! String, first["objectKey"] as! String])
            #expect((mine.data["urls"] as? [[String: Any]])?.count == 1)
            #expect(mine.data["denied"] as? [String] == [first["objectKey"] as! String])
            let download = try await fx.fetch(second["url"] as! String)
            #expect(download.body == bytes)
            #expect(download.header("content-disposition")?.contains("b.bin") == true)
        }
    }

    @Test func rangesHeadConditionalAndUnsatisfiable() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let bytes = patternBytes(10_000, seed: 7)
            let data = try await fx.upload(alice, bytes)
            let url = data["url"] as! String
            let etag = "\"\(data["hash"] as! String)\""
            let middle = try await fx.fetch(url, headers: [("Range", "bytes=100-199")])
            #expect(middle.status == 206)
            #expect(middle.body == Array(bytes[100...199]))
            #expect(middle.header("content-range") == "bytes 100-199/10000")
            let suffix = try await fx.fetch(url, headers: [("Range", "bytes=-10")])
            #expect(suffix.status == 206)
            #expect(suffix.body == Array(bytes[9990...]))
            let open = try await fx.fetch(url, headers: [("Range", "bytes=9000-")])
            #expect(open.body == Array(bytes[9000...]))
            let unsatisfiable = try await fx.fetch(url, headers: [("Range", "bytes=10000-20000")])
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.code == 1309)
            #expect(unsatisfiable.header("content-range") == "bytes */10000")
            let head = try await fx.fetch(url, method: "HEAD")
            #expect(head.status == 200)
            #expect(head.header("content-length") == "10000")
            #expect(head.body.isEmpty)
            let notModified = try await fx.fetch(url, headers: [("If-None-Match", etag)])
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.header("etag") == etag)
            let changed = try await fx.fetch(url, headers: [("If-None-Match", "\"other\"")])
            #expect(changed.status == 200)
            // If-Range with a stale tag: the whole file, not a range of a different version.
            let stale = try await fx.fetch(url, headers: [("Range", "bytes=0-9"), ("If-Range", "\"old\"")])
            #expect(stale.status == 200)
            #expect(stale.body.count == 10_000)
        }
    }

    @Test func expiredTamperedForgedAndWrongAppURLsAreRefused() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let data = try await fx.upload(alice, patternBytes(1000))
            let key = data["objectKey"] as! String
            let url = data["url"] as! String
            let signer = fx.files.signer
            let appId = fx.messaging.appId
            let now = Int64(Date().timeIntervalSince1970)

            let expired = try await fx.raw(
                "GET",
                "/files/\(key)?" + signer.query(objectKey: key, expiresAt: now - 1, appId: appId, disposition: .inline))
            #expect(expired.status == 403)
            #expect(expired.code == 1304)

            var tampered = url
            tampered.removeLast()
            tampered.append(url.hasSuffix("A") ? "B" : "A")
            let badSignature = try await fx.fetch(tampered)
            #expect(badSignature.status == 403)
            #expect(badSignature.code == 1305)

            // A later expiry with the old signature.
            let longer = url.replacingOccurrences(of: "exp=", with: "exp=9")
            #expect(try await fx.fetch(longer).code == 1305)
            #expect(try await fx.raw("GET", "/files/\(key)").code == 1305)

            // Signed for another app (its own derived key) over this app's object key.
            let forged = try await fx.raw(
                "GET",
                "/files/\(key)?exp=\(now + 600)&d=i&sig="
                    + signer.signature(objectKey: key, expiresAt: now + 600, appId: appId + 1, disposition: .inline))
            #expect(forged.status == 403)
            #expect(forged.code == 1305)

            // A valid signature for another key does not open this one.
            let other = try await fx.upload(alice, patternBytes(1000, seed: 9))
            let otherQuery = (other["url"] as! String).split(separator: "?").last!
            let swapped = try await fx.raw("GET", "/files/\(key)?\(otherQuery)")
            #expect(swapped.code == 1305)

            // A well-signed URL for a key that does not exist.
            let ghost = ObjectKey.generate(appId: appId)
            let missing = try await fx.raw(
                "GET",
                "/files/\(ghost)?"
                    + signer.query(objectKey: ghost, expiresAt: now + 60, appId: appId, disposition: .inline))
            #expect(missing.status == 404)
            #expect(missing.code == 1302)
        }
    }

    @Test func pathTraversalAndKeyForgeryAreRefused() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let data = try await fx.upload(alice, patternBytes(1000))
            let key = data["objectKey"] as! String
            let query = String((data["url"] as! String).split(separator: "?").last!)
            let encodedSlash = key.replacingOccurrences(of: "/", with: "%2F")
            for target in [
                "/files/../../etc/passwd?\(query)",
                "/files/\(key)/../../../etc/passwd?\(query)",
                "/files/\(encodedSlash)?\(query)",
                "/files/\(key)%00.png?\(query)",
                "/files/%2E%2E/%2E%2E/etc/passwd?\(query)",
                "/files/\(key.replacingOccurrences(of: "/", with: "//"))?\(query)",
                "/files/?\(query)",
            ] {
                let response = try await fx.raw("GET", target)
                #expect([400, 404].contains(response.status), "\(target) -> \(response.status)")
                #expect(
                    response.code == 1307 || response.code == 1004 || response.code == 1000,
                    "\(target) -> \(response.text)")
                #expect(response.body.count < 500)
            }
            // Another app's user cannot ask for a URL of this app's key.
            let (otherApp, _) = try await fx.live.createApp(name: "Other")
            let mallory = try Session(try await fx.client.register(appKey: otherApp.appKey, username: "mallory"))
            let answer = try await fx.urls(mallory, [key])
            #expect(answer.status == 200)
            #expect((answer.data["urls"] as? [Any])?.isEmpty == true)
            #expect(answer.data["denied"] as? [String] == [key])
            // Nor reference it in a message.
            let bob = try Session(try await fx.client.register(appKey: otherApp.appKey, username: "bob"))
            let send = try await fx.client.post(
                "/api/im/messages",
                json: [
                    "toId": bob.userId, "chatType": "single", "msgType": "image", "clientMsgId": "x1",
                    "content": ["objectKey": key, "width": 1, "height": 1],
                ], token: mallory.accessToken)
            #expect(send.status == 404)
            #expect(send.code == 1302)
        }
    }

    @Test func messagesGrantReadingAndRevokingRemovesTheReference() async throws {
        try await FilesFixture.run { fx in
            let users = try await fx.messaging.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let image = try await fx.upload(alice, tinyPNG, name: "cat.png")
            let key = image["objectKey"] as! String
            // Bob cannot read it yet, nor send it.
            #expect(try await fx.urls(bob, [key]).data["denied"] as? [String] == [key])
            let stolen = try await fx.messaging.send(
                bob, to: carol.userId, msgType: "image",
                content: ["objectKey": key, "width": 1, "height": 1])
            // Another user's private file is as unknown to Bob as a key never issued (404, 1302).
            #expect(stolen.status == 404)
            #expect(stolen.code == 1302)
            let unknown = try await fx.messaging.send(
                alice, to: bob.userId, msgType: "image",
                content: ["objectKey": ObjectKey.generate(appId: fx.messaging.appId), "width": 1, "height": 1])
            #expect(unknown.code == 1302)
            // Alice sends it to Bob: now Bob may read it; Carol, in no conversation with it, may not.
            let message = try await fx.messaging.sendOK(
                alice, to: bob.userId, msgType: "image",
                content: ["objectKey": key, "width": 1, "height": 1])
            let granted = try await fx.urls(bob, [key])
            #expect((granted.data["urls"] as? [[String: Any]])?.first?["objectKey"] as? String == key)
            #expect(try await fx.urls(carol, [key]).data["denied"] as? [String] == [key])
            // Alice revokes her message: Bob loses access, Alice (the owner) keeps it.
            let id = try #require(message["id"].map { "\($0)" })
            let revoke = try await fx.client.post("/api/im/messages/\(id)/revoke", token: alice.accessToken)
            #expect(revoke.status == 200, "\(revoke.text)")
            #expect(try await fx.urls(bob, [key]).data["denied"] as? [String] == [key])
            #expect((try await fx.urls(alice, [key]).data["urls"] as? [Any])?.count == 1)
            // Sent again, Bob may forward it to Carol, who may then read it.
            try await fx.messaging.sendOK(
                alice, to: bob.userId, msgType: "image",
                content: ["objectKey": key, "width": 1, "height": 1])
            try await fx.messaging.sendOK(
                bob, to: carol.userId, msgType: "forward",
                content: [
                    "messages": [
                        ["msgType": "image", "content": ["objectKey": key, "width": 1, "height": 1]]
                    ]
                ])
            #expect((try await fx.urls(carol, [key]).data["urls"] as? [Any])?.count == 1)
            // A group: every member may read what is sent there; a member who leaves may not.
            let group = try await fx.messaging.createGroup(alice, members: [bob, carol])
            let photo = try await fx.upload(carol, tinyPNG + [1], name: "group.png")
            try await fx.messaging.sendOK(
                carol, to: group.groupId, chatType: "group", msgType: "image",
                content: ["objectKey": photo["objectKey"]!, "width": 1, "height": 1])
            #expect((try await fx.urls(alice, [photo["objectKey"] as! String]).data["urls"] as? [Any])?.count == 1)
        }
    }

    @Test func appLimitsOnSizeAndType() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            var update = FileRepository.SettingsUpdate()
            update.maxFileBytes = 50_000
            update.allowedTypes = ["image/*", "application/pdf"]
            try await fx.files.repository.updateSettings(appId: fx.messaging.appId, update)
            let big = try await fx.put(alice, patternBytes(60_000))
            #expect(big.status == 413)
            #expect(big.code == 1300)
            let text = try await fx.put(alice, Array("plain words".utf8), name: "notes.txt")
            #expect(text.status == 415)
            #expect(text.code == 1301)
            let pdf = try await fx.put(alice, Array("%PDF-1.4\n%\u{e2}\n1 0 obj\n".utf8), name: "doc")
            #expect(pdf.status == 201)
            #expect(pdf.data["mimeType"] as? String == "application/pdf")
            // Over the limit in a multipart body too, without a declared length for the part.
            let multipart = try await fx.postMultipart(
                alice,
                FilesFixture.multipartBody([
                    (field: "file", filename: "x.png", type: "image/png", bytes: tinyPNG + patternBytes(60_000))
                ]))
            #expect(multipart.status == 413)
            #expect(multipart.code == 1300)
            #expect(try await fx.count("SELECT count(*) FROM files") == 1)
            #expect(fx.storedFiles("spool").isEmpty)
        }
    }

    @Test func anUploadCutOffMidwayLeavesNoFileAndNoRow() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let port = fx.live.port
            try await onDedicatedThread {
                let client = try RawHTTPClient(port: port)
                try client.send(
                    "PUT /api/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(alice.accessToken)\r\n"
                        + "Content-Length: 4000000\r\n\r\n")
                try client.send(patternBytes(1_500_000))
                client.close()
            }
            // The spool file existed while the body arrived; it must be gone once the server saw the close.
            let clean = try await eventually(timeout: .seconds(10)) { fx.storedFiles("spool").isEmpty }
            #expect(clean != nil)
            #expect(try await fx.count("SELECT count(*) FROM files") == 0)
            #expect(try await fx.count("SELECT count(*) FROM file_blobs") == 0)
            #expect(fx.storedFiles("blobs").isEmpty)
        }
    }

    @Test func sweeperRemovesUnreferencedFilesAndTheirBlobsOnly() async throws {
        try await FilesFixture.run(environment: ["PARLEY_FILES_SWEEP_GRACE_SECONDS": "0"]) { fx in
            let users = try await fx.messaging.users(2)
            let kept = try await fx.upload(users[0], tinyPNG, name: "kept.png")
            let orphan = try await fx.upload(users[0], patternBytes(5000), name: "orphan.bin")
            let thumbParent = try await fx.postMultipart(
                users[0],
                FilesFixture.multipartBody([
                    (field: "file", filename: "v.png", type: nil, bytes: tinyPNG + [1, 2, 3]),
                    (field: "thumbnail", filename: "t.png", type: nil, bytes: tinyPNG + [9]),
                ])
            ).data
            try await fx.messaging.sendOK(
                users[0], to: users[1].userId, msgType: "image",
                content: ["objectKey": kept["objectKey"]!, "width": 1, "height": 1])
            try await fx.messaging.sendOK(
                users[0], to: users[1].userId, msgType: "image",
                content: ["objectKey": thumbParent["objectKey"]!, "width": 1, "height": 1])
            #expect(fx.storedFiles("blobs").count == 4)
            let report = try await fx.files.sweep()
            #expect(report.files == 1)
            #expect(report.blobs == 1)
            #expect(report.objectsDeleted == 1)
            #expect(fx.storedFiles("blobs").count == 3)
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(orphan["objectKey"]!)'") == 0)
            // The referenced image and the thumbnail of a referenced file are still served.
            #expect(try await fx.fetch(kept["url"] as! String).status == 200)
            #expect(try await fx.fetch(thumbParent["thumbnailUrl"] as! String).status == 200)
            #expect(try await fx.fetch(orphan["url"] as! String).status == 404)
            // A second pass has nothing left to do.
            #expect(try await fx.files.sweep() == FilesModule.SweepReport())
        }
    }

    @Test func urlRequestsAreValidated() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let data = try await fx.upload(alice, tinyPNG)
            let key = data["objectKey"] as! String
            #expect(try await fx.urls(alice, [key], ttl: 0).code == 1002)
            #expect(try await fx.urls(alice, [key], ttl: 86400 + 1).code == 1002)
            #expect(try await fx.urls(alice, []).code == 1002)
            let day = try await fx.urls(alice, [key, key, "not-a-key"], ttl: 86400)
            #expect(day.status == 200)
            #expect((day.data["urls"] as? [Any])?.count == 1)
            #expect(day.data["denied"] as? [String] == ["not-a-key"])
            let invalid = try await fx.client.post(
                "/api/files/urls", json: ["objectKeys": "x"], token: alice.accessToken)
            #expect(invalid.code == 1002)
        }
    }
}

/// openapi.yaml and docs/ARCHITECTURE.md describe every file code (WholeAPIDocumentationTests checks the routes).
struct FilesDocumentationTests {
    @Test func everyFileCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for code in [Int](1300...1310) + [1315, 1316, 1317] {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from openapi.yaml's table")
            #expect(architecture.contains("| \(code) |"), "code \(code) missing from docs/ARCHITECTURE.md")
        }
    }
}
