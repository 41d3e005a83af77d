import Foundation
import HealthCodec
import HealthModel

@testable import HealthWire

/// The messages and malformed frames behind Protocol/vectors/. Set `HK_WRITE_VECTORS=1` when running the
/// vector tests to rewrite the files after a deliberate protocol change (then review the diff).
enum Golden {
    static let t0: Timestamp = 1_700_000_000_000_000  // 2023-11-14T22:13:20Z
    static let watch = SourceInfo(
        name: "Anna’s Apple Watch", bundleIdentifier: "com.apple.health.watch", version: "10.1", device: "Watch6,2")
    static let phone = SourceInfo(
        name: "iPhone", bundleIdentifier: "com.apple.health.phone", version: "17.1", device: "iPhone15,2")
    static let uuid1 = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let uuid2 = UUID(uuidString: "0B5B2A4C-8A51-4A3B-9D52-9A3A1C2F3E4D")!

    static var stepsBatch: SampleBatch {
        var batch = SampleBatch(batchID: 42, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        batch.append(start: t0, end: t0 + Micros.minute, value: 57, source: watch)
        batch.append(start: t0 + Micros.minute, end: t0 + 2 * Micros.minute, value: 0, source: watch)
        batch.append(
            start: t0 + 30 * Micros.second, end: t0 + 90 * Micros.second, value: 61, source: phone,
            metadata: [MetadataKey.wasUserEntered: .number(1)])
        return batch
    }

    static var resultBatch: SampleBatch {
        var batch = SampleBatch(batchID: 0, subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
        batch.append(start: t0, end: t0, value: 72, source: watch, uuid: uuid1)
        batch.append(
            start: t0 + 5 * Micros.minute, end: t0 + 5 * Micros.minute, value: 75.5, source: watch, uuid: uuid2)
        return batch
    }

    /// One night of sleep from a Watch: in bed, then core and deep sleep (raw values 0, 3, 4), no unit.
    static var sleepBatch: SampleBatch {
        var batch = SampleBatch(batchID: 43, subject: "anna", typeIdentifier: "sleepAnalysis", unit: "")
        batch.append(start: t0, end: t0 + 30 * Micros.minute, value: 0, source: watch)
        batch.append(start: t0 + 30 * Micros.minute, end: t0 + 2 * Micros.hour, value: 3, source: watch)
        batch.append(start: t0 + 2 * Micros.hour, end: t0 + 3 * Micros.hour, value: 4, source: watch)
        return batch
    }

    /// A token of a start-descending page whose last row started an hour after t0 and arrived with anchor 4097.
    static let pageToken = PageToken(
        SamplePosition(sort: .startDescending, key: t0 + Micros.hour, start: t0 + Micros.hour, anchor: 4097))

    static let dayFilter = SampleFilter(date: DatePredicate(start: t0, end: t0 + Micros.day, strictStartDate: true))
    /// ``dayFilter`` with HealthKit's quantity predicate: `> 100 count/min` and `<= 180 count/min`.
    static let valueFilter = SampleFilter(
        date: dayFilter.date, values: ValueBounds(lower: 100, upper: 180, lowerInclusive: false, unit: "count/min"))
    static let statistics = Statistics(
        start: t0, end: t0 + Micros.day,
        figures: StatisticsFigures(
            sum: 8432,
            mostRecent: MostRecent(value: 12, start: t0 + 3 * Micros.hour, end: t0 + 3 * Micros.hour + Micros.minute),
            duration: 2 * Micros.hour),
        bySource: [SourceStatistics(source: watch, figures: StatisticsFigures(sum: 8000))])
    static let collection = CollectionQuery(
        subject: "anna", type: "stepCount", filter: dayFilter, options: .cumulativeSum, anchor: t0,
        interval: CalendarInterval(1, .day), timeZone: "America/New_York", enumerateFrom: t0,
        enumerateTo: t0 + 7 * Micros.day)
    static let changes = ChangesResult(
        added: resultBatch, deleted: [DeletedObject(uuid: uuid2, syncIdentifier: "reading-7", syncVersion: 3)],
        anchor: 1234, hasMore: false)
    static let identity = IdentitySpec(
        name: "ingest-agent", subjects: ["anna"], grants: [TypeGrant(type: "stepCount", share: true, read: false)])

    /// The worked handshake of PROTOCOL.md "Authentication": identity 1's token, nonces and salt counting up.
    static let token = AccessToken(identityID: 1, secret: Array(0x80..<0xA0))
    static let salt: [UInt8] = Array(64..<80)
    static let handshakeHello = Hello(clientName: "hkq 0.1.0", tokenID: 1, clientNonce: Array(0..<32))
    static let challenge = Challenge(serverNonce: Array(32..<64), salt: salt)
    static var authMessage: [UInt8] {
        TokenAuthentication.authMessage(
            helloPayload: handshakeHello.encodedPayload(), challengePayload: challenge.encodedPayload())
    }
    static var verifier: TokenVerifier {
        TokenVerifier(saltedToken: AccessToken.saltedToken(secret: token.secret, salt: salt))
    }
    static var proof: Proof {
        Proof(
            clientProof: TokenAuthentication.clientProof(
                saltedToken: AccessToken.saltedToken(secret: token.secret, salt: salt), authMessage: authMessage))
    }
    static let limits = SessionLimits(
        maxFrameBytes: 16 << 20, maxInflatedBytes: 64 << 20, maxBatchRows: 100_000, maxPipelinedRequests: 64,
        idleTimeoutSeconds: 300)

    /// One vector per message kind (some kinds have more), in a fixed order.
    static let valid: [(name: String, comment: String, requestID: UInt32, flags: FrameFlags, message: Message)] = [
        (
            "hello", "A client named hkq will prove it holds token id 1's secret; its nonce is bytes 00…1f.", 0, [],
            .hello(handshakeHello)
        ),
        (
            "hello-without-token", "A client without a token (accepted only by hkd --auth off).", 0, [],
            .hello(Hello(clientName: "hkq 0.1.0", tokenID: 0, clientNonce: []))
        ),
        (
            "challenge", "The server's challenge to that hello: nonce bytes 20…3f, identity 1's salt bytes 40…4f.", 0,
            [],
            .challenge(challenge)
        ),
        (
            "proof", "The client's proof for token hkd1_00000001_808182…9f (PROTOCOL.md, Authentication).", 0, [],
            .proof(proof)
        ),
        (
            "welcome", "The server's answer to that proof: its limits and its signature of the same AuthMessage.", 0,
            [],
            .welcome(
                Welcome(
                    serverVersion: "hkd 0.1.0", connectionID: 7, identity: "admin", limits: limits,
                    serverSignature: verifier.serverSignature(authMessage: authMessage)))
        ),
        (
            "welcome-unsigned", "The answer to a hello without a token from hkd --auth off: no signature.", 0, [],
            .welcome(Welcome(serverVersion: "hkd 0.1.0", connectionID: 8, identity: "anonymous", limits: limits))
        ),
        (
            "error", "A request-level error: retrying cannot help, the connection stays open.", 9, [],
            .error(ErrorReply(HealthError(.incompatibleUnit, "unit \"kg\" is not compatible with stepCount (count)")))
        ),
        (
            "error-not-owner",
            "Cluster mode: another node owns the subject's partition; the message starts with its address, retryable.",
            12, [], .error(ErrorReply(HealthError(.notOwner, "127.0.0.1:7421 owns partition 5 (subject anna)")))
        ),
        ("ping", "A ping.", 3, [], .ping(Ping(nonce: 0x0102_0304_0506_0708))),
        ("pong", "The answer to that ping.", 3, [], .pong(Pong(nonce: 0x0102_0304_0506_0708))),
        (
            "insert", "Three stepCount rows from two sources, UUIDs derived from batch id 42, one row with metadata.",
            1, [],
            .insert(Insert(batch: stepsBatch))
        ),
        (
            "insert-ack", "The acknowledgement of batch 42.", 1, [],
            .insertAck(InsertAck(batchID: 42, inserted: 3, duplicates: 0))
        ),
        (
            "delete", "Delete two samples by UUID.", 2, [],
            .delete(Delete(subject: "anna", type: "heartRate", selection: .uuids([uuid1, uuid2])))
        ),
        (
            "delete-by-filter", "Delete a day of one source's steps.", 2, [],
            .delete(
                Delete(
                    subject: "anna", type: "stepCount",
                    selection: .filter(
                        SampleFilter(date: DatePredicate(start: t0, end: t0 + Micros.day), sources: ["iPhone"]))))
        ),
        ("delete-ack", "Two samples deleted.", 2, [], .deleteAck(DeleteAck(deleted: 2))),
        (
            "sample-query", "Heart rate of one day, strict start, newest first, at most 100, in count/s.", 4, [],
            .sampleQuery(
                SampleQuery(
                    subject: "anna", type: "heartRate", filter: dayFilter, sort: .startDescending, limit: 100,
                    unit: "count/s"))
        ),
        (
            "sample-query-after",
            "The next page of sample-query: the 100 rows after the token its answer ended with (format 1, start "
                + "descending, start t0 + 1 h, anchor 4097).",
            4, [],
            .sampleQuery(
                SampleQuery(
                    subject: "anna", type: "heartRate", filter: dayFilter, sort: .startDescending, limit: 100,
                    unit: "count/s", after: pageToken))
        ),
        (
            "sample-query-value-bounds",
            "Heart rate of one day above 100 and at most 180 count/min (filter flag bit 7, f64 bounds).", 4, [],
            .sampleQuery(SampleQuery(subject: "anna", type: "heartRate", filter: valueFilter, unit: "count/min"))
        ),
        (
            "insert-category", "A sleepAnalysis batch: no unit, raw values 0, 3, 4 (inBed, asleepCore, asleepDeep).", 3,
            [], .insert(Insert(batch: sleepBatch))
        ),
        (
            "sample-query-category-values",
            "Sleep of one day whose value is asleepCore or asleepDeep (value bounds bit 7: the category values 3, 4).",
            4, [],
            .sampleQuery(
                SampleQuery(
                    subject: "anna", type: "sleepAnalysis",
                    filter: SampleFilter(date: dayFilter.date, values: .category([3, 4]))))
        ),
        (
            "sample-query-metadata",
            "Sleep samples whose metadata has HKTimeZone Europe/Berlin and any HKMetadataKeySyncVersion (value "
                + "bounds bit 6, no bounds).",
            4, [],
            .sampleQuery(
                SampleQuery(
                    subject: "anna", type: "sleepAnalysis",
                    filter: SampleFilter(
                        metadata: [
                            MetadataPredicate(key: "HKTimeZone", allowedValues: [.string("Europe/Berlin")]),
                            MetadataPredicate(key: "HKMetadataKeySyncVersion"),
                        ])))
        ),
        (
            "statistics-query-by-value", "Sleep of one day: duration, by value (option bit 7) and by source.", 5, [],
            .statisticsQuery(
                StatisticsQuery(
                    subject: "anna", type: "sleepAnalysis", filter: dayFilter,
                    options: [.duration, .separateByValue, .separateBySource]))
        ),
        (
            "statistics-result-by-value",
            "A night's covered time and time per value (figures bit 6): in bed 30 min, core 90 min, deep 1 h.", 5, [],
            .statisticsResult(
                StatisticsResult(
                    unit: "",
                    statistics: Statistics(
                        start: t0, end: t0 + 3 * Micros.hour,
                        figures: StatisticsFigures(
                            duration: 3 * Micros.hour,
                            durationByValue: [
                                ValueDuration(value: 0, duration: 30 * Micros.minute),
                                ValueDuration(value: 3, duration: 90 * Micros.minute),
                                ValueDuration(value: 4, duration: Micros.hour),
                            ]))))
        ),
        (
            "sample-result", "Two heart-rate samples; more frames follow.", 4, [.more],
            .sampleResult(SampleResult(batch: resultBatch))
        ),
        (
            "sample-result-next",
            "The last frame of an answer its limit cut: two rows, then the token of the next page.", 4, [],
            .sampleResult(SampleResult(batch: resultBatch, next: pageToken))
        ),
        (
            "statistics-query", "Sum, most recent and duration of a day's steps, separated by source.", 5, [],
            .statisticsQuery(
                StatisticsQuery(
                    subject: "anna", type: "stepCount", filter: dayFilter,
                    options: [.cumulativeSum, .mostRecent, .duration, .separateBySource]))
        ),
        (
            "statistics-result", "Its answer.", 5, [],
            .statisticsResult(StatisticsResult(unit: "count", statistics: statistics))
        ),
        (
            "collection-query", "Daily step sums in New York for a week, empty days included.", 6, [],
            .collectionQuery(collection)
        ),
        (
            "collection-result", "One bucket.", 6, [],
            .collectionResult(CollectionResult(unit: "count", buckets: [statistics]))
        ),
        (
            "changes-query", "Changes since anchor 1000, at most 50.", 8, [],
            .changesQuery(ChangesQuery(subject: "anna", type: "heartRate", anchor: 1000, limit: 50))
        ),
        ("changes-result", "Two added samples, one deletion, the next anchor.", 8, [], .changesResult(changes)),
        ("subscribe", "A live daily-steps collection.", 10, [], .subscribe(Subscribe(.collection(collection)))),
        (
            "subscribe-observer", "An observer of heart rate.", 11, [],
            .subscribe(Subscribe(.observer(subject: "anna", type: "heartRate", filter: .all)))
        ),
        ("subscribed", "Subscription 10 started.", 10, [], .subscribed(Subscribed(subscriptionID: 10))),
        ("unsubscribe", "End subscription 10.", 12, [], .unsubscribe(Unsubscribe(subscriptionID: 10))),
        ("unsubscribed", "Subscription 10 ended.", 12, [], .unsubscribed(Unsubscribed(subscriptionID: 10))),
        ("update", "A pushed anchored update for subscription 10.", 10, [], .update(Update(.changes(changes)))),
        (
            "update-changed", "A pushed observer notification for subscription 11.", 11, [],
            .update(Update(.changed(anchor: 1235)))
        ),
        (
            "get-source-priority", "Ask for the step sources' order.", 13, [],
            .getSourcePriority(GetSourcePriority(subject: "anna", type: "stepCount"))
        ),
        (
            "source-priority", "Watch first, then iPhone.", 13, [],
            .sourcePriority(SourcePriority(subject: "anna", type: "stepCount", sources: [watch, phone]))
        ),
        (
            "set-source-priority", "Put the iPhone first.", 14, [],
            .setSourcePriority(SetSourcePriority(subject: "anna", type: "stepCount", order: ["iPhone"]))
        ),
        (
            "authorization-status-query", "Sharing status of two types.", 15, [],
            .authorizationStatusQuery(AuthorizationStatusQuery(types: ["stepCount", "heartRate"]))
        ),
        (
            "authorization-status-query-subject",
            "Sharing status of two types for subject anna (the subject after the types).", 15, [],
            .authorizationStatusQuery(AuthorizationStatusQuery(types: ["stepCount", "heartRate"], subject: "anna"))
        ),
        (
            "authorization-status", "Its answer.", 15, [],
            .authorizationStatus(
                AuthorizationStatus(statuses: [
                    .init(type: "stepCount", state: .sharingAuthorized),
                    .init(type: "heartRate", state: .sharingDenied),
                ]))
        ),
        (
            "server-info-query", "Ask for server information (empty payload).", 16, [],
            .serverInfoQuery(ServerInfoQuery())
        ),
        (
            "server-info", "Its answer.", 16, [],
            .serverInfo(
                ServerInfo(
                    serverVersion: "hkd 0.1.0", uptimeMicros: 90 * Micros.second.magnitude, connections: 2,
                    residentBytes: 50 << 20, subjects: 1,
                    samplesPerType: [.init(type: "stepCount", samples: 2_629_800)], blockBytesInMemory: 900_000,
                    blockBytesOnDisk: 3 << 20))
        ),
        (
            "server-info-memory", "An answer with the store's memory by structure (two parts shown).", 16, [],
            .serverInfo(
                ServerInfo(
                    serverVersion: "hkd 0.1.0", uptimeMicros: 90 * Micros.second.magnitude, connections: 1,
                    residentBytes: 50 << 20, subjects: 1,
                    samplesPerType: [.init(type: "heartRate", samples: 4096)],
                    memoryParts: [.init(name: "sealedBlocks", bytes: 5_000), .init(name: "keptUUIDs", bytes: 65_536)]))
        ),
        (
            "cluster-status-query", "Ask a cluster node for its view of the partitions (empty payload).", 17, [],
            .clusterStatusQuery(ClusterStatusQuery())
        ),
        (
            "cluster-status",
            "Node b's answer: partition 0 held by node a (3 records), partition 1 by b itself, caught up.", 17, [],
            .clusterStatus(
                ClusterStatus(
                    node: "b",
                    partitions: [
                        .init(
                            index: 0, owner: "a", ownerAddress: "127.0.0.1:7420", lastSequence: 3, appliedSequence: 0,
                            messages: 3, bytes: 420, replicas: 1),
                        .init(
                            index: 1, owner: "b", ownerAddress: "127.0.0.1:7421", lastSequence: 2, appliedSequence: 2,
                            messages: 2, bytes: 300, replicas: 1),
                    ]))
        ),
        (
            "cluster-status-warning",
            "Node a's answer on a 3-server JetStream cluster whose one partition stream has 1 replica: a warning.", 17,
            [],
            .clusterStatus(
                ClusterStatus(
                    node: "a",
                    partitions: [
                        .init(
                            index: 0, owner: "a", ownerAddress: "127.0.0.1:7420", lastSequence: 1, appliedSequence: 1,
                            messages: 1, bytes: 200, replicas: 1)
                    ], jetStreamServers: 3,
                    warnings: ["1 partition streams on a JetStream cluster of 3 servers have 1 replica"]))
        ),
        (
            "cluster-status-stale",
            "Node a, cut off from NATS: it holds partition 0 but could not renew its lease in time (stale, no owner "
                + "named); partition 1 is node b's as last read.", 17, [],
            .clusterStatus(
                ClusterStatus(
                    node: "a",
                    partitions: [
                        .init(
                            index: 0, owner: "", ownerAddress: "", lastSequence: 5, appliedSequence: 5, messages: 5,
                            bytes: 700, replicas: 3, lease: .stale),
                        .init(
                            index: 1, owner: "b", ownerAddress: "127.0.0.1:7421", lastSequence: 2, appliedSequence: 0,
                            messages: 2, bytes: 300, replicas: 3, lease: .seen),
                    ], jetStreamServers: 3))
        ),
        (
            "admin-request", "Create a write-only ingest identity.", 17, [],
            .adminRequest(AdminRequest(.create(identity)))
        ),
        ("admin-request-revoke", "Revoke it.", 18, [], .adminRequest(AdminRequest(.revoke(name: "ingest-agent")))),
        (
            "admin-result", "The created identity and its token, shown once.", 17, [],
            .adminResult(
                AdminResult(
                    identities: [IdentityInfo(spec: identity, createdAt: t0, revoked: false)],
                    token: "hk_0123456789abcdef0123456789abcdef"))
        ),
        (
            "backup-request", "An online backup into a directory on the server's host.", 18, [],
            .backupRequest(BackupRequest(directory: "/var/backups/hkd-2026-12-01"))
        ),
        (
            "backup-result", "Snapshot generation 7 with 8432 samples, in 5 files of 69120 bytes.", 18, [],
            .backupResult(BackupResult(generation: 7, samples: 8432, files: 5, bytes: 69_120))
        ),
        (
            "workout-insert",
            "A 30-minute outdoor run with energy, distance, a pause, a lap and heart-rate statistics.",
            19, [], .workoutInsert(WorkoutInsert(subject: "anna", workouts: [run]))
        ),
        (
            "workout-insert-ack", "One new workout, none already stored.", 19, [],
            .workoutInsertAck(WorkoutInsertAck(inserted: 1, duplicates: 0))
        ),
        (
            "workout-query", "Running and walking workouts starting within one week, changes after anchor 3.", 20,
            [],
            .workoutQuery(
                WorkoutQuery(
                    subject: "anna",
                    filter: WorkoutFilter(
                        activityTypes: [.running, .walking], start: t0, end: t0 + 7 * Micros.day, afterAnchor: 3),
                    limit: 100))
        ),
        (
            "workout-result", "The run with anchor 4; the workout of anchor 5 was deleted.", 20, [],
            .workoutResult(WorkoutResult(lastAnchor: 5, workouts: [(4, run)], deleted: [(5, uuid2)]))
        ),
        (
            "workout-delete", "Delete one workout by UUID (answered by a deleteAck).", 21, [],
            .workoutDelete(WorkoutDelete(subject: "anna", uuids: [uuid1]))
        ),
        (
            "characteristics-set", "Set the date of birth and biological sex (export form), clear the blood type.",
            22, [],
            .characteristicsSet(
                CharacteristicsSet(
                    subject: "anna",
                    entries: [
                        CharacteristicEntry(key: "dateOfBirth", value: "1984-05-01"),
                        CharacteristicEntry(key: "biologicalSex", value: "HKBiologicalSexFemale"),
                        CharacteristicEntry(key: "bloodType", value: ""),
                    ]))
        ),
        (
            "characteristics-query", "HealthKit's characteristic query for one subject.", 23, [],
            .characteristicsQuery(CharacteristicsQuery(subject: "anna"))
        ),
        (
            "characteristics-result", "The characteristics set, in key order, in short form.", 23, [],
            .characteristicsResult(
                CharacteristicsResult(entries: [
                    CharacteristicEntry(key: "dateOfBirth", value: "1984-05-01"),
                    CharacteristicEntry(key: "biologicalSex", value: "female"),
                    CharacteristicEntry(key: "fitzpatrickSkinType", value: "III"),
                ]))
        ),
        (
            "activity-summary-insert", "Two days of Apple's summaries: a full one, and one with only the stand hours.",
            24, [], .activitySummaryInsert(ActivitySummaryInsert(subject: "anna", summaries: summaries))
        ),
        (
            "activity-summary-insert-ack", "One day new or changed, one stored already as sent.", 24, [],
            .activitySummaryInsertAck(ActivitySummaryInsertAck(changed: 1, unchanged: 1))
        ),
        (
            "activity-summary-query", "The summaries from 2023-11-14 through 2023-11-20.", 25, [],
            .activitySummaryQuery(ActivitySummaryQuery(subject: "anna", first: day14, last: day14 + 6))
        ),
        (
            "activity-summary-result", "The two days found, by day.", 25, [],
            .activitySummaryResult(ActivitySummaryResult(summaries: summaries))
        ),
        (
            "correlation-insert", "A blood pressure reading naming its systolic and diastolic samples.", 22, [],
            .correlationInsert(CorrelationInsert(subject: "anna", correlations: [bloodPressure]))
        ),
        (
            "correlation-insert-ack", "One new correlation, none already stored.", 22, [],
            .correlationInsertAck(CorrelationInsertAck(inserted: 1, duplicates: 0))
        ),
        (
            "correlation-query", "Blood pressure readings starting within one week, changes after anchor 1.", 23, [],
            .correlationQuery(
                CorrelationQuery(
                    subject: "anna",
                    filter: CorrelationFilter(
                        types: [.bloodPressure], start: t0, end: t0 + 7 * Micros.day, afterAnchor: 1),
                    limit: 50))
        ),
        (
            "correlation-result", "The reading with anchor 2; the correlation of anchor 3 was deleted.", 23, [],
            .correlationResult(
                CorrelationResult(lastAnchor: 3, correlations: [(2, bloodPressure)], deleted: [(3, uuid1)]))
        ),
        (
            "correlation-delete", "Delete one correlation by UUID (its samples stay; answered by a deleteAck).", 24,
            [], .correlationDelete(CorrelationDelete(subject: "anna", uuids: [uuid2]))
        ),
        (
            "route-insert", "The run's route: three points with elevation, speed and course, one without.", 25, [],
            .routeInsert(RouteInsert(subject: "anna", routes: [route]))
        ),
        (
            "route-insert-ack", "One new route, none already stored.", 25, [],
            .routeInsertAck(RouteInsertAck(inserted: 1, duplicates: 0))
        ),
        (
            "route-query", "The routes of the run.", 26, [], .routeQuery(RouteQuery(subject: "anna", workouts: [uuid1]))
        ),
        (
            "route-result", "The run's route with anchor 1, nothing more.", 26, [],
            .routeResult(RouteResult(routes: [(1, route)], more: false))
        ),
    ]

    /// 2023-11-14 as a day number.
    static let day14 = CivilCalendar.dayNumber(year: 2023, month: 11, day: 14)

    /// Two activity summaries as an export's `<ActivitySummary>` elements hold them (HEALTHKIT.md §13).
    static var summaries: [ActivitySummary] {
        [
            ActivitySummary(
                day: day14,
                values: [
                    .activeEnergyBurned: 512.25, .activeEnergyBurnedGoal: 600, .appleMoveTime: 0,
                    .appleMoveTimeGoal: 0, .appleExerciseTime: 34, .appleExerciseTimeGoal: 30, .appleStandHours: 11,
                    .appleStandHoursGoal: 12,
                ], activeEnergyBurnedUnit: "kcal"),
            ActivitySummary(day: day14 + 1, values: [.appleStandHours: 3, .appleStandHoursGoal: 12]),
        ]
    }

    /// The run's route as its GPX file holds it (`/workout-routes/route_2023-11-14_10.13pm.gpx`).
    static var route: WorkoutRoute {
        WorkoutRoute(
            workout: uuid1, path: "/workout-routes/route_2023-11-14_10.13pm.gpx",
            points: [
                RoutePoint(
                    time: t0, latitude: 48.8583701, longitude: 2.2944813, elevation: 35.2, speed: 2.9, course: 120),
                RoutePoint(
                    time: t0 + Micros.second, latitude: 48.8583912, longitude: 2.2945120, elevation: 35.4, speed: 3.1,
                    course: 118.5),
                RoutePoint(time: t0 + 2 * Micros.second, latitude: 48.8584101, longitude: 2.2945433),
            ])
    }

    /// A cuff's blood pressure reading (HEALTHKIT.md §13): the correlation and the UUIDs of its two samples.
    static var bloodPressure: Correlation {
        let systolic = try! QuantityType.named("bloodPressureSystolic")
        let diastolic = try! QuantityType.named("bloodPressureDiastolic")
        return Correlation(
            uuid: uuid2, type: .bloodPressure, start: t0, end: t0, source: SourceInfo(name: "Cuff", version: "2.1"),
            metadata: ["HKWasUserEntered": .number(0)],
            members: [
                CorrelationMember(uuid: UUID(uuidString: "5A1F3C2E-0D4B-4E6A-9B7C-1D2E3F405162")!, type: systolic),
                CorrelationMember(uuid: UUID(uuidString: "6B2A4D3F-1E5C-4F7B-8C8D-2E3F40516273")!, type: diastolic),
            ])
    }

    /// A run from the Watch: what an export's `<Workout>` holds (HEALTHKIT.md §13).
    static var run: Workout {
        Workout(
            uuid: uuid1, activityType: .running, start: t0, end: t0 + 30 * Micros.minute,
            duration: 28 * Micros.minute, totalEnergyBurned: WorkoutTotal(value: 338, unit: "kcal"),
            totalDistance: WorkoutTotal(value: 4.2, unit: "km"), source: watch,
            metadata: ["HKIndoorWorkout": .number(0)],
            events: [
                WorkoutEvent(kind: .pause, date: t0 + 10 * Micros.minute),
                WorkoutEvent(kind: .resume, date: t0 + 12 * Micros.minute),
                WorkoutEvent(kind: .lap, date: t0, duration: 15 * Micros.minute),
            ],
            statistics: [
                WorkoutStatistic(
                    type: "HKQuantityTypeIdentifierHeartRate", start: t0, end: t0 + 30 * Micros.minute,
                    average: 151, minimum: 98, maximum: 176, unit: "count/min")
            ],
            routes: ["/workout-routes/route_2023-11-14_10.13pm.gpx"])
    }

    /// Frame limits the malformed vectors are decoded with.
    static let malformedLimits = FrameLimits(maxFrameBytes: 1 << 20, maxInflatedBytes: 1 << 20)

    static func frame(
        _ kind: UInt8, flags: UInt8 = 0, requestID: UInt32 = 1, payload: [UInt8], length: Int? = nil,
        version: UInt8 = 1, reserved: UInt8 = 0
    ) -> [UInt8] {
        var out: [UInt8] = [0x48, 0x4B, version, kind, flags, reserved, 0, 0]
        withUnsafeBytes(of: requestID.littleEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(length ?? payload.count).littleEndian) { out.append(contentsOf: $0) }
        return out + payload
    }

    static func compressed(inflatedLength: UInt32, stream: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: inflatedLength.littleEndian) { Array($0) } + stream
    }

    static func encodedFrame(_ message: Message) -> [UInt8] {
        FrameEncoder(compressionThreshold: .max).encode(message.frame(requestID: 1))
    }

    /// Malformed frames: name, comment, bytes.
    static var malformed: [(name: String, comment: String, bytes: [UInt8])] {
        var bomb = Zlib.deflate([UInt8](repeating: 0, count: 8 << 20), level: 9)
        bomb = compressed(inflatedLength: 8 << 20, stream: bomb)
        let smallBomb = compressed(
            inflatedLength: 1000, stream: Zlib.deflate([UInt8](repeating: 0, count: 4 << 20), level: 9))
        var unknownUnit = stepsBatch
        unknownUnit.unit = "furlong"
        var unknownType = stepsBatch
        unknownType.typeIdentifier = "stepcount"
        var wrongUnit = stepsBatch
        wrongUnit.unit = "kg"
        var outOfRange = sleepBatch
        outOfRange.values[2] = 6
        var sleepInCount = sleepBatch
        sleepInCount.unit = "count"
        return [
            (
                "bad-magic", "The first two bytes are not \"HK\".",
                [0x48, 0x54, 0x54, 0x50, 0x2F, 0x31, 0x2E, 0x31, 0x20, 0x32, 0x30, 0x30, 0x20, 0x4F, 0x4B, 0x0D]
            ),
            ("bad-version", "Frame version 2.", frame(0x04, payload: [UInt8](repeating: 0, count: 8), version: 2)),
            ("unknown-kind", "Kind 0x7f names no message.", frame(0x7F, payload: [])),
            (
                "unknown-flags", "Flag bit 7 is not defined.",
                frame(0x04, flags: 0x80, payload: [UInt8](repeating: 0, count: 8))
            ),
            (
                "reserved-nonzero", "A reserved header byte is set.",
                frame(0x04, payload: [UInt8](repeating: 0, count: 8), reserved: 1)
            ),
            (
                "length-over-limit",
                "The header announces 2 MiB; the limit is 1 MiB. Refused before any payload arrives.",
                frame(0x10, payload: [], length: 2 << 20)
            ),
            (
                "zip-bomb",
                "An 8 KiB deflate stream declaring 8 MiB inflated, over the 1 MiB cap: refused before inflating.",
                frame(0x10, flags: 0x01, payload: bomb)
            ),
            (
                "inflates-past-declared",
                "Declares 1000 inflated bytes but the stream inflates to 4 MiB: stopped at the cap.",
                frame(0x10, flags: 0x01, payload: smallBomb)
            ),
            (
                "corrupt-zlib", "The compressed flag on bytes that are not a zlib stream.",
                frame(
                    0x10, flags: 0x01,
                    payload: compressed(inflatedLength: 16, stream: [0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4]))
            ),
            (
                "truncated-varint", "A deleteAck whose varint has its continuation bit set on the last byte.",
                frame(0x13, payload: [0x80])
            ),
            (
                "trailing-bytes", "A ping with a ninth payload byte.",
                frame(0x04, payload: [UInt8](repeating: 0, count: 9))
            ),
            (
                "row-count-over-payload", "An insert batch claiming far more rows than its bytes can hold.",
                rowCountOverPayload()
            ),
            (
                "value-digits-zero",
                "An insert batch saying its values were rounded to 0 digits (flags bit 2; the digits are 1–17).",
                valueDigitsZero()
            ),
            (
                "unknown-unit", "An insert whose unit is not an HKUnit.",
                encodedFrame(.insert(Insert(batch: unknownUnit)))
            ),
            ("unknown-type", "An insert with a misspelt type.", encodedFrame(.insert(Insert(batch: unknownType)))),
            ("incompatible-unit", "An insert of steps in kilograms.", encodedFrame(.insert(Insert(batch: wrongUnit)))),
            (
                "category-value-out-of-range", "A sleepAnalysis insert whose third row has the value 6.",
                encodedFrame(.insert(Insert(batch: outOfRange)))
            ),
            (
                "category-with-unit", "A sleepAnalysis insert in count: category types have no unit.",
                encodedFrame(.insert(Insert(batch: sleepInCount)))
            ),
            (
                "category-values-repeated", "A sample query whose category value list names 3 twice.",
                categoryValuesRepeated()
            ),
            (
                "metadata-predicate-unknown-mode", "A sample query whose metadata predicate has mode 2.",
                sampleQuery(type: "sleepAnalysis") { payload in
                    payload.write(0x80)  // filter: value bounds only
                    payload.write(0x40)  // metadata predicates, no bounds
                    payload.writeVarint(1)
                    payload.writeString("HKTimeZone")
                    payload.write(2)
                    payload.writeString("")
                }
            ),
            (
                "page-token-other-sort",
                "A start-ascending sample query continuing after a start-descending page's token.",
                encodedFrame(
                    .sampleQuery(
                        SampleQuery(subject: "anna", type: "heartRate", sort: .startAscending, after: pageToken)))
            ),
            (
                "page-token-truncated", "A sample query whose page token ends inside its anchor.",
                encodedFrame(
                    .sampleQuery(
                        SampleQuery(
                            subject: "anna", type: "heartRate", sort: .startDescending,
                            after: PageToken(bytes: pageToken.bytes.dropLast()))))
            ),
            (
                "workout-unknown-activity", "A workout insert whose activity type is 81, a raw value HealthKit skips.",
                workoutUnknownActivity()
            ),
            (
                "workout-events-over-payload", "A workout insert claiming 4096 events in a few bytes.",
                workoutEventsOverPayload()
            ),
            (
                "workout-ends-before-start", "A workout insert whose workout ends an hour before it starts.",
                workoutEndsBeforeStart()
            ),
            (
                "characteristics-unknown-key", "A characteristics set naming the key eyeColor.",
                encodedFrame(
                    .characteristicsSet(
                        CharacteristicsSet(
                            subject: "anna", entries: [CharacteristicEntry(key: "eyeColor", value: "blue")])))
            ),
            (
                "characteristics-invalid-date", "A characteristics set whose date of birth is 1984-13-01.",
                encodedFrame(
                    .characteristicsSet(
                        CharacteristicsSet(
                            subject: "anna", entries: [CharacteristicEntry(key: "dateOfBirth", value: "1984-13-01")])))
            ),
            (
                "activity-summaries-over-payload", "An activity summary insert claiming 1000 summaries in 3 bytes.",
                frame(MessageKind.activitySummaryInsert.rawValue, payload: [4] + Array("anna".utf8) + [0xE8, 0x07, 0])
            ),
            (
                "activity-summary-negative", "An activity summary insert whose exercise time is -5 minutes.",
                encodedFrame(
                    .activitySummaryInsert(
                        ActivitySummaryInsert(
                            subject: "anna", summaries: [ActivitySummary(day: day14, values: [.appleExerciseTime: -5])])
                    ))
            ),
            (
                "activity-summary-query-flags", "An activity summary query with flag bit 2 set.",
                frame(MessageKind.activitySummaryQuery.rawValue, payload: [4] + Array("anna".utf8) + [4])
            ),
            (
                "correlation-unknown-type", "A correlation insert whose correlation type is 3 (only 1 and 2 exist).",
                correlationInsert(type: 3, members: 0)
            ),
            (
                "correlation-members-over-payload", "A correlation insert claiming 200 members in a few bytes.",
                correlationInsert(type: 1, members: 200)
            ),
            (
                "correlation-unknown-member-type",
                "A blood pressure correlation with a member of type bloodPressureMean.",
                {
                    var payload = correlationInsertPrefix(type: 1)
                    payload.writeVarint(1)
                    payload.writeUUID(uuid1)
                    payload.writeString("bloodPressureMean")
                    return frame(MessageKind.correlationInsert.rawValue, payload: payload.bytes)
                }()
            ),
            (
                "correlation-blood-pressure-one-member",
                "A blood pressure correlation with a systolic member and no diastolic one.",
                {
                    var reading = bloodPressure
                    reading.members.removeLast()
                    return encodedFrame(.correlationInsert(CorrelationInsert(subject: "anna", correlations: [reading])))
                }()
            ),
            (
                "route-points-over-payload", "A route insert claiming 1000 points in a few bytes.",
                {
                    var payload = ByteWriter()
                    payload.writeString("anna")
                    payload.writeVarint(1)
                    payload.writeUUID(uuid2)
                    payload.writeUUID(uuid1)
                    payload.writeString("/workout-routes/route.gpx")
                    payload.writeVarint(1000)
                    payload.write(0)
                    payload.writeSignedVarint(t0)
                    return frame(MessageKind.routeInsert.rawValue, payload: payload.bytes)
                }()
            ),
            (
                "route-latitude-out-of-range", "A route insert with a point at latitude 95 degrees.",
                {
                    var far = route
                    far.points[1] = RoutePoint(time: t0 + Micros.second, latitude: 95, longitude: 2.2945120)
                    return encodedFrame(.routeInsert(RouteInsert(subject: "anna", routes: [far])))
                }()
            ),
            (
                "hello-short-nonce", "A hello naming token id 1 with a 16-byte nonce.",
                encodedFrame(.hello(Hello(clientName: "hkq", tokenID: 1, clientNonce: Array(0..<16))))
            ),
            (
                "hello-nonce-without-token", "A hello with token id 0 and a nonce.",
                encodedFrame(.hello(Hello(clientName: "hkq", tokenID: 0, clientNonce: Array(0..<32))))
            ),
            (
                "challenge-unknown-mechanism", "A challenge with mechanism 2.",
                frame(0x06, payload: [2] + Array(32..<64) + [16] + Array(64..<80))
            ),
            (
                "challenge-short-salt", "A challenge whose salt has 8 bytes.",
                encodedFrame(.challenge(Challenge(serverNonce: Array(32..<64), salt: Array(0..<8))))
            ),
            (
                "value-bounds-unknown-bits", "A sample query whose value bounds set bit 4 (undefined).",
                valueBoundsUnknownBits()
            ),
            (
                "filter-writer-flag",
                "A sample query whose filter sets bit 6: the log's writer restriction, never on the wire.",
                filterWriterFlag()
            ),
            ("proof-truncated", "A proof of 31 bytes.", frame(0x07, payload: Array(0..<31))),
            (
                "welcome-short-signature", "A welcome whose server signature has 5 bytes.",
                encodedFrame(
                    .welcome(
                        Welcome(
                            serverVersion: "hkd", connectionID: 1, identity: "admin", limits: limits,
                            serverSignature: [1, 2, 3, 4, 5])))
            ),
        ]
    }

    /// A sample query frame of `type` for subject "anna" whose filter bytes `filter` writes (then start order, no
    /// limit, canonical unit).
    static func sampleQuery(type: String, filter: (inout ByteWriter) -> Void) -> [UInt8] {
        var payload = ByteWriter()
        for text in ["anna", type] { payload.writeString(text) }
        filter(&payload)
        payload.write(SampleSort.startAscending.rawValue)
        payload.writeVarint(0)
        payload.writeString("")
        return frame(MessageKind.sampleQuery.rawValue, payload: payload.bytes)
    }

    /// A sample query of heart rate whose filter has value bounds with the undefined bit 4 set.
    static func valueBoundsUnknownBits() -> [UInt8] {
        sampleQuery(type: "heartRate") { payload in
            payload.write(0x80)  // filter: value bounds only
            payload.write(0x11)  // a lower bound, and bit 4
            payload.writeDouble(100)
            payload.writeString("")
        }
    }

    /// A sample query of sleep whose value bounds list the category value 3 twice.
    static func categoryValuesRepeated() -> [UInt8] {
        sampleQuery(type: "sleepAnalysis") { payload in
            payload.write(0x80)  // filter: value bounds only
            payload.write(0x80)  // category values, no bounds
            payload.writeVarint(2)
            payload.writeSignedVarint(3)
            payload.writeSignedVarint(3)
            payload.writeString("")
        }
    }

    /// A sample query of heart rate whose filter carries flag bit 6 and a writer id.
    static func filterWriterFlag() -> [UInt8] {
        sampleQuery(type: "heartRate") { payload in
            payload.write(0x40)
            payload.writeVarint(1)
        }
    }

    /// An insert whose batch header claims one million rows, followed by nothing (Protocol/SAMPLE-BATCH.md).
    static func rowCountOverPayload() -> [UInt8] {
        var batch = ByteWriter()
        batch.write(SampleBatchCodec.layoutVersion)
        batch.writeLE(UInt64(42))
        for text in ["anna", "stepCount", "count"] { batch.writeString(text) }
        batch.write(0)  // flags: no UUIDs, no metadata
        batch.write(ValueEncoding.raw.rawValue)
        batch.writeVarint(0)  // no sources
        batch.writeVarint(1_000_000)  // rows
        var payload = ByteWriter()
        payload.writeBlob(batch.bytes)
        return frame(0x10, payload: payload.bytes)
    }

    static func valueDigitsZero() -> [UInt8] {
        var batch = ByteWriter()
        batch.write(SampleBatchCodec.layoutVersion)
        batch.writeLE(UInt64(42))
        for text in ["anna", "distanceWalkingRunning", "m"] { batch.writeString(text) }
        batch.write(0x04)  // flags: value digits
        batch.write(ValueEncoding.raw.rawValue)
        batch.write(0)  // value digits 0
        batch.writeVarint(0)  // no sources
        batch.writeVarint(0)  // no rows
        var payload = ByteWriter()
        payload.writeBlob(batch.bytes)
        return frame(0x10, payload: payload.bytes)
    }
}

extension Golden {
    /// The bytes of a workout insert of `workout` up to its events, for malformed vectors.
    static func workoutInsertPrefix(activityRaw: UInt64) -> ByteWriter {
        var payload = ByteWriter()
        payload.writeString("anna")
        payload.writeVarint(1)
        payload.writeUUID(uuid1)
        payload.writeVarint(activityRaw)
        payload.writeSignedVarint(t0)
        payload.writeSignedVarint(t0 + Micros.hour)
        payload.writeSignedVarint(Micros.hour)
        payload.write(0)
        payload.writeSource(watch)
        payload.writeMetadataRow([:])
        return payload
    }

    static func workoutUnknownActivity() -> [UInt8] {
        var payload = workoutInsertPrefix(activityRaw: 81)
        payload.writeVarint(0)
        payload.writeVarint(0)
        payload.writeVarint(0)
        return frame(MessageKind.workoutInsert.rawValue, payload: payload.bytes)
    }

    static func workoutEventsOverPayload() -> [UInt8] {
        var payload = workoutInsertPrefix(activityRaw: 37)
        payload.writeVarint(4096)
        payload.write(1)
        return frame(MessageKind.workoutInsert.rawValue, payload: payload.bytes)
    }

    /// The bytes of a correlation insert of one correlation of type byte `type` up to its member count.
    static func correlationInsertPrefix(type: UInt8) -> ByteWriter {
        var payload = ByteWriter()
        payload.writeString("anna")
        payload.writeVarint(1)
        payload.writeUUID(uuid2)
        payload.write(type)
        payload.writeSignedVarint(t0)
        payload.writeSignedVarint(t0)
        payload.writeSource(watch)
        payload.writeMetadataRow([:])
        return payload
    }

    /// A correlation insert of type byte `type` claiming `members` members, followed by one member's bytes.
    static func correlationInsert(type: UInt8, members: UInt64) -> [UInt8] {
        var payload = correlationInsertPrefix(type: type)
        payload.writeVarint(members)
        payload.writeUUID(uuid1)
        payload.writeString("bloodPressureSystolic")
        return frame(MessageKind.correlationInsert.rawValue, payload: payload.bytes)
    }

    static func workoutEndsBeforeStart() -> [UInt8] {
        var late = run
        late.end = late.start - Micros.hour
        late.duration = 0
        return encodedFrame(.workoutInsert(WorkoutInsert(subject: "anna", workouts: [late])))
    }
}
