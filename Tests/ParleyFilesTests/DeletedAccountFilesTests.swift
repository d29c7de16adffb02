import Foundation
import ParleyFiles
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// A deleted account's uploads (issue 19): the profile no longer names its avatar, so the existing sweeper removes
/// the avatar record and every upload no message references; files in delivered messages stay.
@Suite struct DeletedAccountFilesTests {
    @Test func theSweeperTakesTheUploadsOnlyTheDeletedAccountHeld() async throws {
        try await FilesFixture.run(environment: ["PARLEY_FILES_SWEEP_GRACE_SECONDS": "0"]) { fx in
            let users = try await fx.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let photo = try await fx.upload(alice, tinyPNG, name: "cat.png")["objectKey"] as! String
            let sent = try await fx.upload(alice, Array("sent to bob\n".utf8), name: "note.txt")["objectKey"] as! String
            try await fx.messaging.sendOK(
                alice, to: bob.userId, msgType: "file", content: ["objectKey": sent, "name": "note.txt", "size": 12])
            let set = try await fx.client.patch("/api/users/me", json: ["avatar": photo], token: alice.accessToken)
            let record = try #require(set.string("avatar"))
            // Nothing is swept while the profile and the message hold them.
            _ = try await fx.files.sweep()
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(record)'") == 1)

            let deleted = try await fx.client.send(
                "DELETE", "/api/users/me",
                headers: ["Authorization": "Bearer \(alice.accessToken)", "Content-Type": "application/json"],
                body: Array(#"{"password":"correct horse"}"#.utf8))
            #expect(deleted.status == 200, "\(deleted.text)")
            _ = try await fx.files.sweep()
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(record)'") == 0)
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(photo)'") == 0)
            // Bob still reads the file Alice sent him.
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(sent)'") == 1)
            let urls = try await fx.urls(bob, [sent])
            #expect((urls.data["urls"] as? [[String: Any]])?.first?["objectKey"] as? String == sent)
        }
    }
}
