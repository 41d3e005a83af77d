import Foundation
import HealthModel

/// The state of one import: tokenizer, record mapper, batch assembler and tallies, driven by ``ExportReader``.
///
/// A struct so the per-record path pays no dynamic exclusivity checks (the reader owns it and mutates it once
/// per batch). Use one instance only; never copy it. Not thread-safe.
struct ExportParser {
    let options: ImportOptions
    private let displayName: String
    private var tokenizer: XMLTokenizer
    private var mapper = RecordMapper()
    private var assembler: BatchAssembler
    private var rejectionIndex: [String: Int] = [:]
    /// Skips, rejections and byte counts; the per-record counters live apart so the hot path only bumps integers.
    private var tally = ImportSummary()
    private(set) var recordsSeen = 0
    private var importedByType = [Int](repeating: 0, count: QuantityType.all.count)
    private(set) var samplesImported = 0
    private var workoutsRead = 0
    private var chunk: [UInt8] = []
    private var current: PendingSample?
    /// The `<Workout>` being read, and the workouts read so far (``takeWorkouts()`` hands them out).
    private var currentWorkout: WorkoutMapper.Pending?
    private var workouts: [Workout] = []
    /// The `<Correlation>` being read, and the correlations read so far (``takeCorrelations()`` hands them out).
    private var currentCorrelation: Correlation?
    private var correlations: [Correlation] = []
    /// The member `<Record>` of the correlation being read, until its end (its children are part of its identity).
    private var currentMember: PendingSample?
    /// The identity of the workout or correlation being read, fed with every element inside it.
    private var objectIdentity = ElementIdentity()
    /// A reused buffer for ``objectIdentity``.
    private var identityScratch: [UInt8] = []
    /// The names of the open elements below the root, while inside a workout or correlation.
    private var openNames: [String] = []
    /// The depth of the element skipped whole that is open, if any: what it holds goes with it, uncounted.
    private var skippedDepth: Int?
    /// Children past a cap, counted and not kept: metadata entries of the record being read, metadata entries and
    /// members of the correlation being read (with its line). The element is then rejected whole at its end;
    /// workouts count theirs in ``WorkoutMapper/Pending``.
    private var extraMetadata = 0
    private var correlationExtra = (line: 0, metadata: 0, members: 0, unreadMember: nil as Rejection?)
    /// Routes of the workouts read: inline ones whole, route files still to read (``ExportReader`` reads them).
    private var routes: [WorkoutRoute] = []
    private var routeFiles: [(workout: UUID, path: String, line: Int)] = []
    /// The characteristics of the `<Me>` element (HEALTHKIT.md §13); empty when the export has none.
    private(set) var characteristics = Characteristics()
    /// The `<ActivitySummary>` elements read (``takeActivitySummaries()`` hands them out), and the export's day
    /// (from `<ExportDate>`), whose summary is incomplete and skipped.
    private var activitySummaries: [ActivitySummary] = []
    /// The summary read for each day, to tell a repeated `<ActivitySummary>` from a contradicting one.
    private var activitySummaryOfDay: [Int: ActivitySummary] = [:]
    private var activitySummariesRead = 0
    private var exportDay: Int?
    private var nextProgressAt: Int64
    private var documentEnded = false
    private var finalProgressReported = false

    init(subject: String, options: ImportOptions, displayName: String) {
        self.options = options
        self.displayName = displayName
        tokenizer = XMLTokenizer(displayName: displayName)
        assembler = BatchAssembler(subject: subject, options: options)
        nextProgressAt = options.progressInterval
    }

    /// What the import did so far.
    var summary: ImportSummary {
        var result = tally
        result.recordsSeen = recordsSeen
        result.workouts = workoutsRead
        result.characteristics = characteristics.values.count
        result.activitySummaries = activitySummariesRead
        for (index, count) in importedByType.enumerated() where count > 0 {
            result.imported[QuantityType.all[index].identifier] = count
        }
        return result
    }

    /// The next batch, reading `source` as needed, or `nil` at the end; see ``ExportReader/nextBatch()``.
    mutating func nextBatch(from source: ExportByteSource, progress: ((ImportProgress) -> Void)?) throws -> SampleBatch?
    {
        while true {
            if let batch = assembler.takeReady() {
                tally.batches += 1
                samplesImported += batch.count
                return batch
            }
            if documentEnded {
                if !finalProgressReported {
                    finalProgressReported = true
                    progress?(report(source))
                }
                return nil
            }
            if let token = try tokenizer.next() {
                try handle(token, source: source)
                continue
            }
            chunk.removeAll(keepingCapacity: true)
            if try source.read(into: &chunk) {
                tally.xmlBytes += Int64(chunk.count)
                chunk.withUnsafeBytes { tokenizer.append($0) }
            } else {
                tokenizer.finishInput()
            }
            tally.bytesRead = source.bytesRead
            if source.bytesRead >= nextProgressAt {
                nextProgressAt = source.bytesRead + options.progressInterval
                progress?(report(source))
            }
        }
    }

    /// Progress as of now.
    func report(_ source: ExportByteSource) -> ImportProgress {
        ImportProgress(
            bytesRead: source.bytesRead, totalBytes: source.totalBytes, recordsSeen: recordsSeen,
            samplesImported: samplesImported)
    }

    // MARK: - Elements

    private mutating func handle(_ token: XMLToken, source: ExportByteSource) throws {
        switch token {
        case .startTag(let selfClosing):
            try startElement(selfClosing: selfClosing)
        case .endTag:
            if tokenizer.depth == 3, currentMember != nil { finishMember() }
            if tokenizer.depth == 2, current != nil { finishRecord() }
            if tokenizer.depth == 2, let pending = currentWorkout { endWorkout(pending) }
            if tokenizer.depth == 2, let pending = currentCorrelation { endCorrelation(pending) }
        case .endOfDocument:
            assembler.flushAll()
            documentEnded = true
            // Drain the source so a zip entry's size and CRC are verified even if bytes follow the root element.
            chunk.removeAll(keepingCapacity: true)
            while try source.read(into: &chunk) { chunk.removeAll(keepingCapacity: true) }
            tally.bytesRead = source.bytesRead
        }
    }

    private mutating func startElement(selfClosing: Bool) throws {
        let name = tokenizer.name
        if let skippedDepth {
            if tokenizer.depth > skippedDepth {
                if current != nil {
                    mapper.addChild(name, depth: tokenizer.depth - 2, tokenizer.attributes, to: &current!)
                } else if currentWorkout != nil || currentCorrelation != nil {
                    objectIdentity.add(
                        element: name, depth: tokenizer.depth - 2, tokenizer.attributes, scratch: &identityScratch)
                    if currentMember != nil {
                        mapper.addChild(name, depth: tokenizer.depth - 3, tokenizer.attributes, to: &currentMember!)
                    }
                }
                return
            }
            self.skippedDepth = nil
        }
        switch tokenizer.depth {
        case 1:
            guard name.equals("HealthData") else {
                throw HealthError(
                    .invalidArgument,
                    "\(displayName) is not an Apple Health export (root element <\(name.clipped())>, "
                        + "expected <HealthData>)")
            }
            countUnread(of: "HealthData", kept: [])
        case 2:
            if name.equals("Workout") || name.equals("Correlation") || name.equals("Me")
                || name.equals("ActivitySummary")
            {
                openNames = [name.string]
                countUnread(of: openNames[0], kept: ExportVocabulary.keptAttributes(of: openNames[0], in: "HealthData"))
            }
            if name.equals("Workout") {
                startWorkout(selfClosing: selfClosing)
                return
            }
            if name.equals("Me") {
                readCharacteristics()
                return
            }
            if name.equals("ActivitySummary") {
                readActivitySummary()
                return
            }
            if name.equals("ExportDate") { exportDay = ActivitySummaryMapper.exportDay(tokenizer.attributes) }
            if name.equals("Correlation") {
                // Kept as an object naming its members; the member records appear at top level too, where they
                // are imported as samples (HEALTHKIT.md §13).
                tally.correlations += 1
                correlationExtra = (tokenizer.tokenLine, 0, 0, nil)
                startCorrelation(selfClosing: selfClosing)
                return
            }
            guard name.equals("Record") else {
                tally.skip(name.string)
                skippedDepth = 2
                return
            }
            recordsSeen += 1
            let line = tokenizer.tokenLine
            switch mapper.map(tokenizer.attributes, line: line) {
            case .sample(let sample):
                current = sample
                for attribute in mapper.takeUnreadAttributes() { tally.skip("Record " + attribute) }
            case .skipped(let kind): tally.skip(kind)
            case .rejected(let rejection):
                reject(rejection, element: "Record", line: line)
            }
            if selfClosing, current != nil { finishRecord() }
        default:
            if current != nil {
                addToRecord(name)
            } else if currentWorkout != nil || currentCorrelation != nil {
                objectIdentity.add(
                    element: name, depth: tokenizer.depth - 2, tokenizer.attributes, scratch: &identityScratch)
                let parent = openNames[min(openNames.count, tokenizer.depth - 2) - 1]
                openNames.removeSubrange(min(openNames.count, tokenizer.depth - 2)...)
                openNames.append(name.string)
                guard let kept = ExportVocabulary.keptAttributes(of: openNames.last!, in: parent) else {
                    if currentMember != nil, tokenizer.depth > 3 {
                        // Part of the member's identity; counted as skipped where its top-level copy is read.
                        mapper.addChild(name, depth: tokenizer.depth - 3, tokenizer.attributes, to: &currentMember!)
                    } else {
                        tally.skip(openNames.last!)
                    }
                    skippedDepth = tokenizer.depth
                    return
                }
                countUnread(of: openNames.last!, kept: kept)
                if currentWorkout != nil {
                    if tokenizer.depth == 3
                        || (tokenizer.depth == 4 && (name.equals("FileReference") || name.equals("Location")))
                    {
                        WorkoutMapper.add(child: name.string, tokenizer.attributes, to: &currentWorkout!)
                    }
                } else {
                    addToCorrelation(name, selfClosing: selfClosing)
                }
            }
        // Anything else lies inside a rejected element, counted as rejected with what it holds.
        }
    }

    /// Counts each attribute of the current element `name` that is not among `kept` as skipped
    /// (``ExportVocabulary``).
    private mutating func countUnread(of name: String, kept: Set<String>?) {
        guard let kept else { return }
        for attribute in tokenizer.attributes {
            let attributeName = attribute.name.string
            if !kept.contains(attributeName) { tally.skip(name + " " + attributeName) }
        }
    }

    /// A child of the `<Record>` being read (at depth 3 or deeper): a `<MetadataEntry>` is kept; any other
    /// (`<HeartRateVariabilityMetadataList>` …) is skipped whole, counted under its name. All of them are part of
    /// the record's identity.
    private mutating func addToRecord(_ name: ByteSpan) {
        if tokenizer.depth == 3, name.equals("MetadataEntry") {
            switch mapper.addMetadata(tokenizer.attributes, to: &current!) {
            case .kept: break
            case .pastCap: extraMetadata += 1
            case .incomplete: tally.skip("Record MetadataEntry without a key or value")
            }
        } else {
            mapper.addChild(name, depth: tokenizer.depth - 2, tokenizer.attributes, to: &current!)
            tally.skip(name.string)
            skippedDepth = tokenizer.depth
        }
    }

    /// Counts `error` (a ``Rejection``, or any error by its description) against the element `element` (`Record`,
    /// `Workout` …) starting on `line`.
    private mutating func reject(_ error: any Error, element: String, line: Int) {
        let rejection = error as? Rejection ?? Rejection("\(error)")
        tally.reject(
            rejection, element: element, line: line, maxLines: options.maxLinesPerReason, index: &rejectionIndex)
    }

    /// The workouts read since the last call.
    mutating func takeWorkouts() -> [Workout] {
        defer { workouts.removeAll() }
        return workouts
    }

    /// The activity summaries read since the last call.
    mutating func takeActivitySummaries() -> [ActivitySummary] {
        defer { activitySummaries.removeAll() }
        return activitySummaries
    }

    /// Reads `<ActivitySummary>`: the export day's (incomplete) is skipped, an invalid one rejected with its line.
    private mutating func readActivitySummary() {
        let line = tokenizer.tokenLine
        do {
            let summary = try ActivitySummaryMapper.summary(tokenizer.attributes)
            if let exportDay, summary.day >= exportDay {
                tally.skip(ImportSummary.incompleteActivitySummary)
                return
            }
            if let earlier = activitySummaryOfDay[summary.day] {
                // HealthKit keeps one summary a day: the same one again is one object, another is refused by name.
                if earlier == summary {
                    tally.identicalActivitySummaries += 1
                    return
                }
                throw Rejection(
                    "activity summary of a day given before with other values",
                    "activity summary \(summary.dayText) is given again with other values; the first one is kept")
            }
            activitySummaryOfDay[summary.day] = summary
            activitySummaries.append(summary)
            activitySummariesRead += 1
        } catch {
            reject(error, element: "ActivitySummary", line: line)
        }
    }

    /// Reads `<Me>`: each known characteristic attribute; an invalid value is rejected with the element's line.
    private mutating func readCharacteristics() {
        let line = tokenizer.tokenLine
        let fields = WorkoutMapper.strings(tokenizer.attributes)
        tally.characteristicElements += 1
        for key in CharacteristicKey.allCases {
            guard let value = fields[key.exportAttribute] else { continue }
            do {
                try characteristics.set(key, value)
            } catch {
                let reason = "\(key.rawValue) is not a valid value"
                let detail = (error as? HealthError)?.message ?? "\(key.rawValue) \"\(value.prefix(40))\" is not valid"
                reject(Rejection(reason, detail), element: "Me", line: line)
            }
        }
    }

    private mutating func startWorkout(selfClosing: Bool) {
        let line = tokenizer.tokenLine
        do {
            var pending = try WorkoutMapper.workout(tokenizer.attributes)
            pending.line = line
            startObjectIdentity()
            if selfClosing { finishWorkout(pending) } else { currentWorkout = pending }
        } catch {
            reject(error, element: "Workout", line: line)
        }
    }

    /// Starts the identity of the workout or correlation whose start tag was just read, with its attributes.
    private mutating func startObjectIdentity() {
        objectIdentity = ElementIdentity()
        objectIdentity.add(element: tokenizer.name, depth: 0, tokenizer.attributes, scratch: &identityScratch)
    }

    /// The end tag of a `<Workout>`: the workout is rejected whole when children went past a cap
    /// (``WorkoutMapper/excess(_:)``), its inline route alone when a location is not valid or past the cap.
    private mutating func endWorkout(_ pending: WorkoutMapper.Pending) {
        if let rejection = WorkoutMapper.excess(pending) {
            currentWorkout = nil
            reject(rejection, element: "Workout", line: pending.line)
            return
        }
        var pending = pending
        if let rejection = WorkoutMapper.inlineRouteRejection(pending) {
            reject(rejection, element: "WorkoutRoute", line: pending.line)
            pending.locations = []
        }
        finishWorkout(pending)
    }

    private mutating func finishWorkout(_ pending: WorkoutMapper.Pending) {
        currentWorkout = nil
        let workout: Workout
        do {
            workout = try WorkoutMapper.finish(pending, identity: objectIdentity)
        } catch {
            reject(error, element: "Workout", line: pending.line)
            return
        }
        for kind in pending.unread { tally.skip(kind) }
        workouts.append(workout)
        workoutsRead += 1
        if !pending.locations.isEmpty {
            let points = pending.locations.enumerated().sorted {
                ($0.element.time, $0.offset) < ($1.element.time, $1.offset)
            }
            routes.append(WorkoutRoute(workout: workout.uuid, path: "", points: points.map(\.element)))
            tally.routes += 1
        }
        for path in workout.routes { routeFiles.append((workout.uuid, path, tokenizer.tokenLine)) }
    }

    /// The inline routes read since the last call, and the route files named (to be read).
    mutating func takeRoutes() -> (routes: [WorkoutRoute], files: [(workout: UUID, path: String, line: Int)]) {
        defer {
            routes.removeAll()
            routeFiles.removeAll()
        }
        return (routes, routeFiles)
    }

    /// Counts a route read, or rejects a route file for `rejection` at the workout's `line`.
    mutating func noteRoute(_ rejection: Rejection?, line: Int) {
        guard let rejection else {
            tally.routes += 1
            return
        }
        reject(rejection, element: "WorkoutRoute", line: line)
    }

    /// The correlations read since the last call.
    mutating func takeCorrelations() -> [Correlation] {
        defer { correlations.removeAll() }
        return correlations
    }

    private mutating func startCorrelation(selfClosing: Bool) {
        let line = tokenizer.tokenLine
        do {
            let pending = try CorrelationMapper.correlation(tokenizer.attributes)
            startObjectIdentity()
            if selfClosing { finishCorrelation(pending) } else { currentCorrelation = pending }
        } catch {
            reject(error, element: "Correlation", line: line)
        }
    }

    /// An element inside the `<Correlation>` being read: a `<MetadataEntry>`, or a member `<Record>` mapped as a
    /// top-level one is, with its children (only its identity is kept; the sample itself comes from the top-level
    /// copy, whose identity is the same). A member that maps to no sample, or children past a cap, make the
    /// correlation rejected whole at its end.
    private mutating func addToCorrelation(_ name: ByteSpan, selfClosing: Bool) {
        if tokenizer.depth > 3 {
            if currentMember == nil { return }
            if tokenizer.depth == 4, name.equals("MetadataEntry") {
                mapper.addMetadata(tokenizer.attributes, to: &currentMember!)
            } else {
                mapper.addChild(name, depth: tokenizer.depth - 3, tokenizer.attributes, to: &currentMember!)
            }
        } else if name.equals("MetadataEntry") {
            switch CorrelationMapper.addMetadata(tokenizer.attributes, to: &currentCorrelation!) {
            case .kept: break
            case .pastCap: correlationExtra.metadata += 1
            case .incomplete: tally.skip("Correlation MetadataEntry without a key or value")
            }
        } else if name.equals("Record") {
            switch mapper.map(tokenizer.attributes, line: 0) {
            case .sample(let sample):
                currentMember = sample
                if selfClosing { finishMember() }
            case .skipped(let kind):
                correlationExtra.unreadMember =
                    correlationExtra.unreadMember ?? Rejection("a member of type \(kind.prefix(80)) is not a sample")
            case .rejected(let rejection):
                correlationExtra.unreadMember = correlationExtra.unreadMember ?? rejection
            }
        }
    }

    /// Adds the member `<Record>` just ended to the correlation being read.
    private mutating func finishMember() {
        guard var member = currentMember.take() else { return }
        member.seal()
        if !CorrelationMapper.add(member: member, to: &currentCorrelation!) { correlationExtra.members += 1 }
    }

    /// The end tag of a `<Correlation>`: rejected whole when children went past a cap or a member is not a sample.
    private mutating func endCorrelation(_ pending: Correlation) {
        let extra = correlationExtra
        var rejection: Rejection?
        if extra.metadata > 0 {
            rejection = .tooMany(
                "metadata entries", in: "correlation", count: pending.metadata.count + extra.metadata,
                limit: RecordMapper.maxMetadataEntries)
        } else if extra.members > 0 {
            rejection = .tooMany(
                "members", in: "correlation", count: pending.members.count + extra.members,
                limit: Correlation.Limits.maxMembers)
        } else if let member = extra.unreadMember {
            rejection = Rejection("correlation has a member that is not valid", "correlation member: \(member.detail)")
        }
        guard let rejection else { return finishCorrelation(pending) }
        currentCorrelation = nil
        reject(rejection, element: "Correlation", line: extra.line)
    }

    private mutating func finishCorrelation(_ pending: Correlation) {
        currentCorrelation = nil
        do {
            correlations.append(try CorrelationMapper.finish(pending, identity: objectIdentity))
        } catch {
            reject(error, element: "Correlation", line: tokenizer.tokenLine)
        }
    }

    private mutating func finishRecord() {
        // Moved out, not copied: a copy would retain the sample's source and metadata only to release them.
        guard var sample = current.take() else { return }
        sample.seal()
        guard extraMetadata == 0 else {
            let rejection = Rejection.tooMany(
                "metadata entries", in: "record", count: sample.metadata.count + extraMetadata,
                limit: RecordMapper.maxMetadataEntries)
            extraMetadata = 0
            reject(rejection, element: "Record", line: sample.line)
            return
        }
        if assembler.append(sample) {
            importedByType[sample.typeIndex] += 1
        } else {
            tally.identicalRows += 1
        }
    }
}
