import Foundation
import HealthModel

/// Reads an Apple Health export (export.zip or a plain export.xml) as a stream of ``SampleBatch``es.
///
/// Pull batches with ``nextBatch()`` until it returns `nil`, then read ``summary``. Memory stays flat whatever
/// the file size: the file is read a MiB at a time, inflated 16 KB of input at a time, and only unfinished
/// batches are held. Quantity records become samples of the subject given; everything else is counted as
/// skipped, and malformed records are counted as rejected with their line. A damaged file (not an export,
/// truncated or corrupt zip, broken XML) throws a ``HealthError``. The same file always yields the same
/// batches, UUIDs and batch ids.
///
/// Threading: not thread-safe; use it from one thread or task at a time. Reading blocks on file I/O.
public final class ExportReader {
    /// The person every sample is about.
    public let subject: String
    /// The settings of this import.
    public let options: ImportOptions
    /// What the import did so far; complete once ``nextBatch()`` has returned `nil`.
    public var summary: ImportSummary {
        var result = tally
        result.recordsSeen = recordsSeen
        for (index, count) in importedByType.enumerated() where count > 0 {
            result.imported[QuantityType.all[index].identifier] = count
        }
        return result
    }

    private let file: ExportFile
    private let source: ExportByteSource
    private let tokenizer: XMLTokenizer
    private let progressHandler: ((ImportProgress) -> Void)?
    private var mapper = RecordMapper()
    private var assembler: BatchAssembler
    private var rejectionIndex: [String: Int] = [:]
    /// Skips, rejections and byte counts; the per-record counters live apart so the hot path only bumps integers.
    private var tally = ImportSummary()
    private var recordsSeen = 0
    private var importedByType = [Int](repeating: 0, count: QuantityType.all.count)
    private var chunk: [UInt8] = []
    private var current: PendingSample?
    private var samplesImported = 0
    private var nextProgressAt: Int64
    private var documentEnded = false
    private var finalProgressReported = false

    /// Opens the export at `path` for `subject`.
    ///
    /// `progress` is called on the thread calling ``nextBatch()``, about every ``ImportOptions/progressInterval``
    /// bytes of the file and once at the end, after the last batch. Throws ``ErrorCode/invalidArgument`` when the file is missing or
    /// is not an export, ``ErrorCode/malformedPayload`` when the zip is damaged.
    public init(
        path: String, subject: String, options: ImportOptions = ImportOptions(),
        progress: ((ImportProgress) -> Void)? = nil
    ) throws {
        try SampleRules.validate(subject: subject)
        self.subject = subject
        self.options = options
        file = try ExportFile(path: path)
        source = try ExportSourceOpener.open(file)
        tokenizer = XMLTokenizer(displayName: file.displayName)
        assembler = BatchAssembler(subject: subject, options: options)
        progressHandler = progress
        nextProgressAt = options.progressInterval
    }

    /// Where the import stands now.
    public var progress: ImportProgress {
        ImportProgress(
            bytesRead: source.bytesRead, totalBytes: source.totalBytes, recordsSeen: recordsSeen,
            samplesImported: samplesImported)
    }

    /// The next batch of samples, or `nil` when the export is exhausted (``summary`` is then complete).
    ///
    /// Throws a ``HealthError`` naming the file (and the line, for XML) when the export is damaged; the reader
    /// must not be used after that.
    public func nextBatch() throws -> SampleBatch? {
        while true {
            if let batch = assembler.takeReady() {
                tally.batches += 1
                samplesImported += batch.count
                return batch
            }
            if documentEnded {
                if !finalProgressReported {
                    finalProgressReported = true
                    progressHandler?(progress)
                }
                return nil
            }
            if let token = try tokenizer.next() {
                try handle(token)
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
                progressHandler?(progress)
            }
        }
    }

    // MARK: - Elements

    private func handle(_ token: XMLToken) throws {
        switch token {
        case .startTag(let selfClosing):
            try startElement(selfClosing: selfClosing)
        case .endTag:
            if tokenizer.depth == 2, current != nil { finishRecord() }
        case .endOfDocument:
            assembler.flushAll()
            documentEnded = true
            tally.bytesRead = source.bytesRead
            // Drain the source so a zip entry's size and CRC are verified even if bytes follow the root element.
            chunk.removeAll(keepingCapacity: true)
            while try source.read(into: &chunk) { chunk.removeAll(keepingCapacity: true) }
        }
    }

    private func startElement(selfClosing: Bool) throws {
        let name = tokenizer.name
        switch tokenizer.depth {
        case 1:
            guard name.equals("HealthData") else {
                throw HealthError(
                    .invalidArgument,
                    "\(file.displayName) is not an Apple Health export (root element <\(name.clipped())>, "
                        + "expected <HealthData>)")
            }
        case 2:
            guard name.equals("Record") else {
                tally.skip(name.string)
                return
            }
            recordsSeen += 1
            let line = tokenizer.tokenLine
            switch mapper.map(tokenizer.attributes, line: line) {
            case .sample(let sample): current = sample
            case .skipped(let kind): tally.skip(kind)
            case .rejected(let rejection):
                tally.reject(rejection, line: line, maxLines: options.maxLinesPerReason, index: &rejectionIndex)
            }
            if selfClosing, current != nil { finishRecord() }
        case 3:
            if current != nil, name.equals("MetadataEntry") {
                mapper.addMetadata(tokenizer.attributes, to: &current!)
            }
        default:
            break
        }
    }

    private func finishRecord() {
        guard let sample = current else { return }
        current = nil
        importedByType[sample.type.index] += 1
        assembler.append(sample)
    }
}
