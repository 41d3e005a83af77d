import HealthHTTP
import HealthPosix
import HealthServer

/// The dashboard's static files on the HTTP listener: `/` is `Dashboard/index.html`, `/ui/NAME` the page's
/// scripts and style sheet, built into hkd (SwiftPM's `embedInCode`, so the one binary serves them wherever it
/// is installed) or read from `--dashboard-dir` while changing them; `/ui/chart.js` is Chart.js read from
/// `--chartjs` (Debian's libjs-chart.js). The files hold no data, so they need no token: the page reads `/v1`
/// with the person's. Every answer forbids the page to reach any other host (`Content-Security-Policy`).
struct Dashboard: Sendable {
    /// A file of the page: its name under `/ui/`, media type and built-in bytes.
    struct File: Sendable {
        let name: String
        let contentType: String
        let bytes: [UInt8]
    }

    static let files: [File] = [
        File(name: "index.html", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        File(name: "dashboard.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.dashboard_css),
        File(name: "api.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.api_js),
        File(name: "charts.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.charts_js),
        File(name: "views.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.views_js),
        File(name: "dashboard.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.dashboard_js),
    ]

    /// Where Chart.js is served: the page loads it from hkd like its own files.
    static let chartJSName = "chart.js"

    /// Same origin only: scripts, styles, fetches and images from hkd (images also as `data:` URLs, which the
    /// page uses for its empty icon so the browser asks for no favicon); no frames, no plugins.
    static let securityHeaders: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-cache"),
    ]

    let directory: String?
    let chartJS: String

    /// The dashboard `configuration` asks for: built in, or read from its `dashboardDirectory`.
    init(_ configuration: ServerConfiguration) {
        directory = configuration.dashboardDirectory
        chartJS = configuration.chartJS
    }

    /// The answer to a request for one of the dashboard's paths (`/`, `/ui/…`); `nil` for any other path.
    func response(to request: HTTPRequest, segments: [String]) -> HTTPResponse? {
        let name: String
        switch segments.count {
        case 0: name = "index.html"
        case 2 where segments[0] == "ui": name = segments[1]
        default:
            guard segments.first == "ui" else { return nil }
            name = ""
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPProblem(
                status: 405, title: "Method Not Allowed", detail: "\(request.method) is not served here; use GET, HEAD"
            ).response
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        }
        var response = content(named: name)
        response.headers += Self.securityHeaders
        if request.method == "HEAD" { response.body = [] }
        return response
    }

    /// The file `name` (one of ``files`` or Chart.js) as a response, or a problem saying why it is missing.
    private func content(named name: String) -> HTTPResponse {
        if name == Self.chartJSName {
            return read(
                chartJS, contentType: "text/javascript; charset=utf-8",
                missing: "apt-get install libjs-chart.js, or pass hkd --chartjs PATH")
        }
        guard let file = Self.files.first(where: { $0.name == name }) else {
            return HTTPProblem(
                status: 404, title: "Not Found", detail: "the dashboard has no file \(name); open / instead"
            ).response
        }
        guard let directory else {
            return HTTPResponse(status: 200, headers: [("Content-Type", file.contentType)], body: file.bytes)
        }
        return read(directory + "/" + file.name, contentType: file.contentType, missing: "check --dashboard-dir")
    }

    /// The file at `path` (at most 16 MiB), or a 404 naming it and what to do.
    private func read(_ path: String, contentType: String, missing: String) -> HTTPResponse {
        do {
            let bytes = try FileSystem.readFile(path, maxBytes: 16 << 20)
            return HTTPResponse(status: 200, headers: [("Content-Type", contentType)], body: bytes)
        } catch {
            return HTTPProblem(
                status: 404, title: "Not Found", detail: "cannot read \(path) (\(error)): \(missing)"
            ).response
        }
    }
}
