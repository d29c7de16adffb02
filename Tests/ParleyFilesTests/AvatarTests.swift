import Foundation
import ParleyFiles
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Issue 18, item 2: an avatar is an image its setter may read, and the profile names an avatar record of its own;
/// only that record is readable by the whole app, so revokes and group removals keep taking the original away.
@Suite struct AvatarTests {
    static func readable(_ fx: FilesFixture, _ session: Session, _ key: String) async throws -> Bool {
        let answer = try await fx.urls(session, [key])
        return (answer.data["urls"] as? [[String: Any]])?.first?["objectKey"] as? String == key
    }

    static func setAvatar(_ fx: FilesFixture, _ session: Session, _ key: Any) async throws -> TestResponse {
        try await fx.client.patch("/api/users/me", json: ["avatar": key], token: session.accessToken)
    }

    @Test func userAvatarsAreImagesTheSetterMayReadAndRecordsOfTheirOwn() async throws {
        try await FilesFixture.run(environment: ["PARLEY_FILES_SWEEP_GRACE_SECONDS": "0"]) { fx in
            let users = try await fx.messaging.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let photo = try await fx.upload(alice, tinyPNG, name: "cat.png")["objectKey"] as! String
            // Carol may not read Alice's private photo, so she may not make it her avatar (the live probe).
            let stolen = try await Self.setAvatar(fx, carol, photo)
            #expect(stolen.status == 404)
            #expect(stolen.code == 1302)
            #expect(!(try await Self.readable(fx, carol, photo)))

            // Alice sends it to Bob, who makes it his avatar: the profile names a record of its own.
            let message = try await fx.messaging.sendOK(
                alice, to: bob.userId, msgType: "image", content: ["objectKey": photo, "width": 1, "height": 1])
            let set = try await Self.setAvatar(fx, bob, photo)
            #expect(set.status == 200, "\(set.text)")
            let record = try #require(set.string("avatar"))
            #expect(record != photo)
            #expect(ObjectKey.appId(of: record) == fx.messaging.appId)
            // Everyone in the app may read the record; the original stays Alice's and Bob's only.
            #expect(try await Self.readable(fx, carol, record))
            #expect(!(try await Self.readable(fx, carol, photo)))
            let seen = try await fx.client.get("/api/users/\(bob.userId)", token: carol.accessToken)
            #expect(seen.string("avatar") == record)
            // Setting the record again keeps it.
            #expect(try await Self.setAvatar(fx, bob, record).string("avatar") == record)

            // Alice revokes her message: Bob loses the original (the revoke means what it says), not his avatar.
            let id = try #require(message["id"].map { "\($0)" })
            #expect(try await fx.client.post("/api/im/messages/\(id)/revoke", token: alice.accessToken).status == 200)
            #expect(!(try await Self.readable(fx, bob, photo)))
            #expect(!(try await Self.readable(fx, carol, photo)))
            #expect(try await Self.readable(fx, carol, record))

            // Only images: a text file Carol uploaded is hers to read, not an avatar.
            let notes = try await fx.upload(carol, Array("just text\n".utf8), name: "notes.txt")["objectKey"] as! String
            let text = try await Self.setAvatar(fx, carol, notes)
            #expect(text.status == 415)
            #expect(text.code == 1310)
            // Carol may use Bob's avatar (everyone may read it): she gets a record of her own.
            let copied = try await Self.setAvatar(fx, carol, record)
            #expect(copied.status == 200)
            let carolsRecord = try #require(copied.string("avatar"))
            #expect(carolsRecord != record)

            // Bob removes his avatar: its record is no longer readable by others, and the sweeper removes it.
            #expect(try await Self.setAvatar(fx, bob, NSNull()).data["avatar"] is NSNull)
            #expect(!(try await Self.readable(fx, carol, record)))
            _ = try await fx.files.sweep()
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(record)'") == 0)
            // Carol's record and the content it shares are kept.
            #expect(try await fx.count("SELECT count(*) FROM files WHERE object_key = '\(carolsRecord)'") == 1)
            #expect(try await Self.readable(fx, alice, carolsRecord))
        }
    }

    @Test func registrationMayUseOnlyAvatarsEveryoneMayRead() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let photo = try await fx.upload(alice, tinyPNG, name: "cat.png")["objectKey"] as! String
            func register(_ username: String, avatar: String) async throws -> TestResponse {
                try await fx.client.post(
                    "/api/auth/register",
                    json: [
                        "username": username, "password": "correct horse", "platform": "ios", "avatar": avatar,
                    ],
                    headers: ["X-App-Key": fx.messaging.appKey])
            }
            let refused = try await register("mallory", avatar: photo)
            #expect(refused.status == 404)
            #expect(refused.code == 1302)
            #expect(try await fx.count("SELECT count(*) FROM users WHERE username = 'mallory'") == 0)
            let record = try #require(try await Self.setAvatar(fx, alice, photo).string("avatar"))
            let welcomed = try await register("nina", avatar: record)
            #expect(welcomed.status == 200, "\(welcomed.text)")
            let nina = try #require((welcomed.data["user"] as? [String: Any])?["avatar"] as? String)
            #expect(nina != record)
        }
    }

    @Test func groupAvatarsFollowTheSameRule() async throws {
        try await FilesFixture.run { fx in
            let users = try await fx.messaging.users(3)
            let (alice, bob, dave) = (users[0], users[1], users[2])
            let photo = try await fx.upload(alice, tinyPNG, name: "team.png")["objectKey"] as! String
            let bobs = try await fx.upload(bob, tinyPNG + [7], name: "bob.png")["objectKey"] as! String
            // A group may not be created with a file its creator cannot read.
            let refused = try await fx.client.post(
                "/api/im/groups", json: ["name": "Team", "memberIds": [bob.userId], "avatarKey": bobs],
                token: alice.accessToken)
            #expect(refused.status == 404)
            #expect(refused.code == 1302)
            let created = try await fx.client.post(
                "/api/im/groups", json: ["name": "Team", "memberIds": [bob.userId], "avatarKey": photo],
                token: alice.accessToken)
            #expect(created.status == 201, "\(created.text)")
            let groupId = try #require(created.string("groupId"))
            let record = try #require(created.string("avatarKey"))
            #expect(record != photo)
            // Dave, in no conversation with the group, may read its avatar record and not the original.
            #expect(try await Self.readable(fx, dave, record))
            #expect(!(try await Self.readable(fx, dave, photo)))
            // Bob (a member, not an admin) may not change it; Alice may, only to a file she may read.
            let byMember = try await fx.client.patch(
                "/api/im/groups/\(groupId)", json: ["avatarKey": bobs], token: bob.accessToken)
            #expect(byMember.status == 403)
            let unreadable = try await fx.client.patch(
                "/api/im/groups/\(groupId)", json: ["avatarKey": bobs], token: alice.accessToken)
            #expect(unreadable.code == 1302)
            let cleared = try await fx.client.patch(
                "/api/im/groups/\(groupId)", json: ["avatarKey": NSNull()], token: alice.accessToken)
            #expect(cleared.status == 200, "\(cleared.text)")
            #expect(!(try await Self.readable(fx, dave, record)))
        }
    }
}
