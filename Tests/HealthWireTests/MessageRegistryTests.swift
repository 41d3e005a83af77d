import HealthModel
import Testing

@testable import HealthWire

@Suite("The message registry")
struct MessageRegistryTests {
    @Test("every kind is registered to a type of that kind")
    func everyKindIsRegistered() {
        for kind in MessageKind.allCases {
            #expect(kind.messageType.kind == kind, "\(kind) is registered to \(kind.messageType)")
        }
    }

    @Test("requests name a registered reply; replies and handshake messages are not requests")
    func requestsAndReplies() {
        let requests = MessageKind.allCases.filter(\.isRequest)
        #expect(
            Set(requests) == [
                .ping, .insert, .delete, .sampleQuery, .statisticsQuery, .collectionQuery, .changesQuery, .subscribe,
                .unsubscribe, .getSourcePriority, .setSourcePriority, .authorizationStatusQuery, .serverInfoQuery,
                .adminRequest, .backupRequest, .workoutInsert, .workoutQuery, .workoutDelete, .characteristicsSet,
                .characteristicsQuery, .activitySummaryInsert, .activitySummaryQuery,
            ])
        #expect(MessageKind.sampleQuery.replyKind == .sampleResult)
        #expect(MessageKind.setSourcePriority.replyKind == .sourcePriority)
        #expect(MessageKind.hello.replyKind == nil)
        #expect(MessageKind.workoutDelete.replyKind == .deleteAck)
        #expect(MessageKind.characteristicsSet.replyKind == .characteristicsResult)
        #expect(MessageKind.activitySummaryInsert.replyKind == .activitySummaryInsertAck)
        #expect(Set(MessageKind.allCases.filter(\.streamsReplies)) == [.sampleQuery, .collectionQuery])
    }

    @Test("every golden message wraps, unwraps and decodes through the registry")
    func goldenMessagesRoundTrip() throws {
        for entry in Golden.valid {
            let body = entry.message.body
            #expect(Message(body) == entry.message, "\(entry.name)")
            let frame = entry.message.frame(requestID: entry.requestID)
            #expect(try Message.decode(frame) == entry.message, "\(entry.name)")
        }
    }

    @Test("a reply of the wrong type cannot be taken for the request's reply")
    func replyTypes() {
        let reply = Message.pong(Pong(nonce: 7))
        #expect(reply.body as? Ping.Reply == Pong(nonce: 7))
        #expect(reply.body as? Insert.Reply == nil)
    }
}
