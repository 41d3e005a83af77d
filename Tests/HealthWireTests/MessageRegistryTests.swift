import HealthCodec
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
                .characteristicsQuery, .activitySummaryInsert, .activitySummaryQuery, .correlationInsert,
                .correlationQuery, .correlationDelete, .routeInsert, .routeQuery, .clusterStatusQuery,
            ])
        #expect(MessageKind.sampleQuery.replyKind == .sampleResult)
        #expect(MessageKind.setSourcePriority.replyKind == .sourcePriority)
        #expect(MessageKind.hello.replyKind == nil)
        #expect(MessageKind.workoutDelete.replyKind == .deleteAck)
        #expect(MessageKind.characteristicsSet.replyKind == .characteristicsResult)
        #expect(MessageKind.activitySummaryInsert.replyKind == .activitySummaryInsertAck)
        #expect(MessageKind.correlationDelete.replyKind == .deleteAck)
        #expect(MessageKind.correlationInsert.replyKind == .correlationInsertAck)
        #expect(Set(MessageKind.allCases.filter(\.streamsReplies)) == [.sampleQuery, .collectionQuery])
    }

    @Test("each type's own reply type and streaming agree with its conformances to Request and StreamedRequest")
    func staticAnswersAgreeWithConformances() {
        for kind in MessageKind.allCases {
            let type = kind.messageType
            // The dynamic casts the registry no longer makes (each failed cast scans every conformance record).
            let reply = (type as? any Request.Type).map { requestReply($0) }
            #expect(type.replyType.map(ObjectIdentifier.init) == reply.map(ObjectIdentifier.init), "\(kind)")
            #expect(type.streamsReplies == (type is any StreamedRequest.Type), "\(kind)")
        }
    }

    @Test("every golden message wraps, unwraps and decodes through the registry")
    func goldenMessagesRoundTrip() throws {
        for entry in Golden.valid {
            let body = entry.message.body
            #expect(Message(body) == entry.message, "\(entry.name)")
            let frame = entry.message.frame(requestID: entry.requestID)
            #expect(try Message.decode(frame) == entry.message, "\(entry.name)")
            // `request` lists exactly the kinds the conformances make requests.
            #expect((entry.message.request != nil) == entry.message.kind.isRequest, "\(entry.name)")
        }
    }

    @Test("a checked request carries its type and unit resolved and its filter in the canonical unit")
    func checkedRequestsAreTyped() throws {
        var query = SampleQuery(subject: "anna", type: "HKQuantityTypeIdentifierBodyMass", unit: "lb")
        query.filter.values = ValueBounds(lower: 1000, upper: 2000, unit: "g")
        let typed = try query.checked()
        #expect(typed.type == "bodyMass")
        #expect(typed.unit == "lb")
        #expect(typed.request.filter.values?.unit == "")
        #expect(typed.request.filter.values?.lower == 1)
        #expect(try SampleQuery(subject: "anna", type: "bodyMass").checked().unit == nil)
        #expect(throws: HealthError.self) { try SampleQuery(subject: "anna", type: "stepz").checked() }
        #expect(throws: HealthError.self) { try SampleQuery(subject: "anna", type: "stepCount", unit: "kg").checked() }
        #expect(throws: HealthError.self) { try SampleQuery(subject: "", type: "stepCount").checked() }
    }

    @Test("a reply of the wrong type cannot be taken for the request's reply")
    func replyTypes() {
        let reply = Message.pong(Pong(nonce: 7))
        #expect(reply.body as? Ping.Reply == Pong(nonce: 7))
        #expect(reply.body as? Insert.Reply == nil)
    }
}

@Suite("Optional trailing fields")
struct OptionalFieldTests {
    @Test(
        "serverInfo without block bytes (the payload ends after the samples per type) reads them as 0, and 0 and 0 are not written"
    )
    func serverInfoWithoutBlockBytes() throws {
        let info = ServerInfo(
            serverVersion: "hkd 0.1.0", uptimeMicros: 5, connections: 1, residentBytes: 7, subjects: 1,
            samplesPerType: [.init(type: "stepCount", samples: 3)], blockBytesInMemory: 11, blockBytesOnDisk: 13)
        var w = ByteWriter()
        info.encode(into: &w)
        // The last two bytes are the two one-byte varints 11 and 13.
        #expect(Array(w.bytes.suffix(2)) == [11, 13])
        var old = ByteReader(Array(w.bytes.dropLast(2)))
        let decoded = try ServerInfo(from: &old, limits: .standard)
        #expect(decoded.blockBytesInMemory == 0 && decoded.blockBytesOnDisk == 0)
        #expect(decoded.samplesPerType == info.samplesPerType)
        var current = ByteReader(w.bytes)
        #expect(try ServerInfo(from: &current, limits: .standard).blockBytesOnDisk == 13)
        var zeros = ByteWriter()
        decoded.encode(into: &zeros)
        #expect(zeros.bytes == Array(w.bytes.dropLast(2)))
        // One of the pair alone is malformed.
        var half = ByteReader(Array(w.bytes.dropLast(1)))
        #expect(throws: (any Error).self) { try ServerInfo(from: &half, limits: .standard) }
    }

    @Test(
        "clusterStatus leases: one byte per partition after the warnings; a payload ending before them reads as not said; a count or state out of range is malformed"
    )
    func clusterStatusLeases() throws {
        let partitions: [ClusterStatus.Partition] = [
            .init(
                index: 0, owner: "", ownerAddress: "", lastSequence: 5, appliedSequence: 5, messages: 5, bytes: 700,
                replicas: 3, lease: .stale),
            .init(
                index: 1, owner: "b", ownerAddress: "127.0.0.1:7421", lastSequence: 2, appliedSequence: 0, messages: 2,
                bytes: 300, replicas: 3, lease: .seen),
        ]
        let status = ClusterStatus(node: "a", partitions: partitions)
        var w = ByteWriter()
        status.encode(into: &w)
        // JetStream servers 0 and no warnings are written before the leases: count 2, then stale and seen.
        #expect(Array(w.bytes.suffix(5)) == [0, 0, 2, 2, 3])
        var current = ByteReader(w.bytes)
        #expect(try ClusterStatus(from: &current, limits: .standard).partitions.map(\.lease) == [.stale, .seen])
        var old = ByteReader(Array(w.bytes.dropLast(3)))
        #expect(try ClusterStatus(from: &old, limits: .standard).partitions.map(\.lease) == [.unsaid, .unsaid])
        for bad in [[1, 2], [2, 2, 9]] as [[UInt8]] {
            var reader = ByteReader(Array(w.bytes.dropLast(3)) + bad)
            #expect(throws: (any Error).self) { try ClusterStatus(from: &reader, limits: .standard) }
        }
    }
}

/// The `Reply` type of a request type, opened from its existential.
private func requestReply<R: Request>(_ type: R.Type) -> any WireMessage.Type { R.Reply.self }
