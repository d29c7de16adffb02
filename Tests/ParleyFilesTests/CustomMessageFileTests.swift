import Foundation
import ParleyFiles
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Seed 000 sends images, flash images, multi-images and voice notes as custom messages holding `object_key` /
/// `object_keys`: checked like image messages when sent, readable by the conversation, kept by the sweeper.
@Suite("Files in custom messages")
struct CustomMessageFileTests {
    @Test func recipientsMayReadTheFilesAndTheSweeperKeepsThem() async throws {
        try await FilesFixture.run(environment: ["PARLEY_FILES_SWEEP_GRACE_SECONDS": "0"]) { fx in
            let users = try await fx.messaging.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let photo = try await fx.upload(alice, tinyPNG, name: "photo.png")["objectKey"] as! String
            let second = try await fx.upload(alice, tinyPNG + [1], name: "b.png")["objectKey"] as! String
            let third = try await fx.upload(alice, tinyPNG + [2], name: "c.png")["objectKey"] as! String
            let voice = try await fx.upload(alice, patternBytes(3000), name: "v.m4a")["objectKey"] as! String
            let orphan = try await fx.upload(alice, patternBytes(2000, seed: 5), name: "o.bin")["objectKey"] as! String
            #expect(try await fx.urls(bob, [photo]).data["denied"] as? [String] == [photo])

            try await fx.messaging.sendOK(
                alice, to: bob.userId, msgType: "custom",
                content: ["type": "image", "object_key": photo, "width": 16, "height": 16, "url_expire_at": 0])
            try await fx.messaging.sendOK(
                alice, to: bob.userId, msgType: "custom",
                content: ["type": "multi_image", "object_keys": [second, third], "count": 2])
            try await fx.messaging.sendOK(
                alice, to: bob.userId, msgType: "custom",
                content: ["type": "audio", "object_key": voice, "duration_sec": 3])

            let granted = try await fx.urls(bob, [photo, second, third, voice])
            #expect(granted.status == 200)
            #expect((granted.data["denied"] as? [String])?.isEmpty == true, "\(granted.text)")
            #expect((granted.data["urls"] as? [[String: Any]])?.count == 4)
            // A download by the member works; someone outside the conversation is still denied.
            let url = try #require((granted.data["urls"] as? [[String: Any]])?.first?["url"] as? String)
            #expect(try await fx.fetch(url).status == 200)
            #expect(try await fx.urls(carol, [photo]).data["denied"] as? [String] == [photo])

            // Bob forwards the image message as it is: Carol may then read it.
            try await fx.messaging.sendOK(
                bob, to: carol.userId, msgType: "forward",
                content: ["messages": [["msgType": "custom", "content": ["type": "image", "object_key": photo]]]])
            #expect((try await fx.urls(carol, [photo]).data["urls"] as? [Any])?.count == 1)

            // The sweeper (no grace period here) removes only the file no message references.
            let report = try await fx.files.sweep()
            #expect(report.files == 1)
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(orphan)'") == 0)
            for kept in [photo, second, third, voice] {
                #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(kept)'") == 1)
            }
        }
    }

    @Test func theSenderMayReferenceOnlyFilesItMayUse() async throws {
        try await FilesFixture.run { fx in
            let users = try await fx.messaging.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let alices = try await fx.upload(alice, tinyPNG, name: "mine.png")["objectKey"] as! String
            let before = try await fx.messaging.messageCount()

            // Another user's private file, even deep inside the content.
            let stolen = try await fx.messaging.send(
                bob, to: carol.userId, msgType: "custom",
                content: ["type": "card", "pages": [["media": ["objectKeys": [alices]]]]])
            #expect(stolen.status == 404 && stolen.code == 1302, "\(stolen.text)")

            // A key of another app.
            let (otherApp, _) = try await fx.live.createApp(name: "Other")
            let mallory = try Session(try await fx.client.register(appKey: otherApp.appKey, username: "mallory"))
            let foreign = try await fx.upload(mallory, tinyPNG, name: "x.png")["objectKey"] as! String
            let crossApp = try await fx.messaging.send(
                alice, to: bob.userId, msgType: "custom", content: ["type": "image", "object_key": foreign])
            #expect(crossApp.status == 404 && crossApp.code == 1302, "\(crossApp.text)")

            // Not a key as uploads return them (the app's own storage path, say).
            let malformed = try await fx.messaging.send(
                alice, to: bob.userId, msgType: "custom", content: ["type": "image", "object_key": "chat/2026/a.jpg"])
            #expect(malformed.status == 404 && malformed.code == 1302, "\(malformed.text)")
            let notAString = try await fx.messaging.send(
                alice, to: bob.userId, msgType: "custom", content: ["type": "image", "object_key": 12])
            #expect(notAString.status == 400 && notAString.code == 1002, "\(notAString.text)")

            // Nested beyond the bound.
            var deep: Any = ["object_key": alices]
            for _ in 0..<8 { deep = ["inner": deep] }
            let tooDeep = try await fx.messaging.send(alice, to: bob.userId, msgType: "custom", content: deep)
            #expect(tooDeep.status == 400 && tooDeep.code == 1002, "\(tooDeep.text)")
            #expect(tooDeep.message?.contains("deeper") == true)

            #expect(try await fx.messaging.messageCount() == before)
            #expect(try await fx.urls(bob, [alices]).data["denied"] as? [String] == [alices])
        }
    }

    /// 10,000 keys in one content (short ones, within the route's body limit; the custom size limit raised to let
    /// it through): a clear 1002 at once, nothing stored.
    @Test func tenThousandKeysAreRefusedQuickly() async throws {
        try await FilesFixture.run(environment: ["PARLEY_IM_MAX_CUSTOM_BYTES": "1048576"]) { fx in
            let users = try await fx.messaging.users(2)
            let before = try await fx.messaging.messageCount()
            let clock = ContinuousClock()
            let start = clock.now
            let refused = try await fx.messaging.send(
                users[0], to: users[1].userId, msgType: "custom",
                content: ["type": "multi_image", "object_keys": (0..<10_000).map { "k\($0)" }])
            let elapsed = clock.now - start
            #expect(refused.status == 400 && refused.code == 1002, "\(refused.text)")
            #expect(refused.message?.contains("at most 32") == true)
            #expect(elapsed < .seconds(5))
            #expect(try await fx.messaging.messageCount() == before)
        }
    }
}
