import ParleyChatClient
import Testing

/// Lines typed into `parley chat`: commands with their arguments, plain text as messages, refusals named.
@Suite struct ChatCommandTests {
    private func parse(_ line: String) throws -> ChatCommand? { try ChatCommand.parse(line) }

    @Test func plainLinesAreMessages() throws {
        #expect(try parse("hello bob") == .send("hello bob"))
        #expect(try parse("  spaced out  ") == .send("spaced out"))
        #expect(try parse("//not a command") == .send("/not a command"))
        #expect(try parse("héllo 👋") == .send("héllo 👋"))
    }

    @Test func blankLinesAreNothing() throws {
        #expect(try parse("") == nil)
        #expect(try parse("   \t ") == nil)
    }

    @Test func commandsWithoutArguments() throws {
        #expect(try parse("/help") == .help)
        #expect(try parse("/list") == .list)
        #expect(try parse("/ls") == .list)
        #expect(try parse("/whoami") == .whoami)
        #expect(try parse("/quit") == .quit)
        #expect(try parse(" /exit ") == .quit)
        #expect(throws: ChatUsageError("/list takes no arguments")) { try parse("/list all") }
    }

    @Test func openTakesUsersGroupsConversationsAndListNumbers() throws {
        #expect(try parse("/open u_8Jk2") == .open(.user("u_8Jk2")))
        #expect(try parse("/open user:g_is_a_user") == .open(.user("g_is_a_user")))
        #expect(try parse("/open g_team") == .open(.group("g_team")))
        #expect(try parse("/open group:team") == .open(.group("team")))
        #expect(try parse("/open sg:g_team") == .open(.group("g_team")))
        #expect(try parse("/open si:u_a:u_b") == .open(.conversation("si:u_a:u_b")))
        #expect(try parse("/open 2") == .open(.listIndex(2)))
        #expect(throws: ChatUsageError.self) { try parse("/open") }
        #expect(throws: ChatUsageError.self) { try parse("/open 0") }
        #expect(throws: ChatUsageError.self) { try parse("/open two words") }
        #expect(throws: ChatUsageError.self) { try parse("/open si:u_a") }
        #expect(throws: ChatUsageError.self) { try parse("/open user:") }
        #expect(throws: ChatUsageError.self) { try parse("/open bad/id") }
        #expect(throws: ChatUsageError.self) { try parse("/open " + String(repeating: "a", count: 65)) }
    }

    @Test func historyTakesAnOptionalCount() throws {
        #expect(try parse("/history") == .history(limit: 20))
        #expect(try parse("/history 5") == .history(limit: 5))
        #expect(throws: ChatUsageError("/history takes a count from 1 to 100")) { try parse("/history 500") }
        #expect(throws: ChatUsageError("/history takes a count from 1 to 100")) { try parse("/history all") }
    }

    @Test func uploadKeepsThePathAsTyped() throws {
        #expect(try parse("/upload /tmp/my file.png") == .upload(path: "/tmp/my file.png"))
        #expect(throws: ChatUsageError("/upload needs a file path")) { try parse("/upload") }
    }

    @Test func revokeTakesAnIdOrTheLastMessage() throws {
        #expect(try parse("/revoke") == .revoke(messageId: nil))
        #expect(try parse("/revoke 1042") == .revoke(messageId: "1042"))
        #expect(try parse("/revoke #1042") == .revoke(messageId: "1042"))
        for bad in ["/revoke abc", "/revoke -1", "/revoke 99999999999999999999", "/revoke #"] {
            #expect(throws: ChatUsageError.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func editNamesAMessageOnlyWithAHash() throws {
        #expect(try parse("/edit #1042 new text") == .edit(messageId: "1042", text: "new text"))
        #expect(try parse("/edit 3 apples") == .edit(messageId: nil, text: "3 apples"))
        #expect(try parse("/edit fixed!") == .edit(messageId: nil, text: "fixed!"))
        #expect(throws: ChatUsageError("/edit needs the new text")) { try parse("/edit") }
    }

    @Test func unknownCommandsAreRefusedNotSent() {
        #expect(throws: ChatUsageError("unknown command /frobnicate (/help lists the commands)")) {
            try parse("/frobnicate now")
        }
    }
}
