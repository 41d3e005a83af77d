import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An export.xml read with Foundation's `XMLParser`, independently of the importer's own tokenizer, so tests can
/// compute what an import must store from the XML itself.
public final class ExportOracle {
    /// One element: its name, attributes and children, in document order.
    public final class Element {
        public let name: String
        public let attributes: [String: String]
        public fileprivate(set) var children: [Element] = []

        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }

        /// Its whole content as a comparable value: name, attributes sorted, children in order.
        public var content: String {
            let pairs = attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "<\(name) \(pairs.joined(separator: " "))>" + children.map(\.content).joined() + "</\(name)>"
        }

        /// The instant of a date attribute (`2020-12-13 15:27:27 +0100`), in seconds since 1970.
        public func instant(_ attribute: String) -> Double? {
            attributes[attribute].flatMap(ExportOracle.instant)
        }
    }

    /// The children of `<HealthData>`.
    public let elements: [Element]

    /// Reads the export.xml at `path`.
    public init(path: String) throws {
        let parser = try requireParser(path)
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path])
        }
        elements = root.children
    }

    /// The top-level elements named `name`.
    public func elements(named name: String) -> [Element] { elements.filter { $0.name == name } }

    /// Seconds since 1970 of an export date.
    public static func instant(_ text: String) -> Double? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.date(from: text)?.timeIntervalSince1970
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: Element?
        private var open: [Element] = []

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String]
        ) {
            let element = Element(name: name, attributes: attributes)
            open.last?.children.append(element)
            if open.isEmpty { root = element }
            open.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }
    }
}

/// A parser of the file at `path`, or an error naming it.
private func requireParser(_ path: String) throws -> XMLParser {
    guard let parser = XMLParser(contentsOf: URL(fileURLWithPath: path)) else {
        throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    return parser
}
