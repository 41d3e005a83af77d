import Foundation
import TestSupport
import Testing

@testable import HKQKit

/// The first of `names` found in the usual binary directories.
private func tool(_ name: String) -> String? {
    ["/usr/bin", "/bin", "/usr/local/bin"].map { "\($0)/\(name)" }.first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}

/// Every command path and option of the standard program, as the scripts and the man page must name them.
private let table = CommandTable(commands: HKQ.commands)

/// `hkq completion bash|zsh|fish` and `hkq help --man`: generated from the command table, so nothing drifts.
@Suite struct CompletionTests {
    @Test(arguments: Shell.allCases) func scriptNamesEveryCommandAndOption(shell: Shell) async {
        let result = await runHKQ(["completion", shell.rawValue])
        #expect(result.status == 0, "\(result.err)")
        let script = result.out
        for entry in table.entries {
            #expect(script.contains(shell.quote(entry.spec.name)), "\(shell): command \(entry.words)")
            if !entry.spec.subcommands.isEmpty || !entry.spec.options.isEmpty || !entry.spec.arguments.isEmpty {
                #expect(script.contains("\(shell.quote(entry.words))"), "\(shell): key \(entry.words)")
            }
            for option in entry.spec.options {
                #expect(script.contains(shell.quote("--\(option.name)")), "\(shell): \(entry.words) --\(option.name)")
                #expect(script.contains(shell.quote("\(entry.words)|\(option.name)")) == !option.isFlag)
            }
        }
        for option in GlobalOptions.specs { #expect(script.contains(shell.quote("--\(option.name)")), "\(shell)") }
        #expect(script.contains(shell.quote("words table json csv chart ndjson")), "--format values")
        #expect(script.contains(shell.quote("words rfc3339 epoch-ms epoch-us")), "--time-format values")
        #expect(script.contains(shell.quote("stepCount")) && script.contains(shell.quote("types")))
    }

    @Test func bashAcceptsTheBashScript() async throws {
        let bash = try #require(tool("bash"))
        let script = CompletionScript(program: .standard).script(for: .bash)
        let check = try await runChild(bash, ["-n"], input: script)
        #expect(check.status == 0, "\(check.errors)")
    }

    /// Sources the bash script and completes a few command lines the way bash would call it.
    @Test func bashCompletesCommandsOptionsAndValues() async throws {
        let bash = try #require(tool("bash"))
        let script = CompletionScript(program: .standard).script(for: .bash)
        let driver = #"""
            t() {
                COMP_LINE="$1"; COMP_POINT=${#1}; read -ra COMP_WORDS <<< "$1"
                [[ $1 == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
                _hkq; echo "${COMPREPLY[*]}"
            }
            t "hkq un"; t "hkq units "; t "hkq stats --format "; t "hkq --server h:1 watch --tz z stepC"
            t "hkq samples --sor"; t "hkq completion "; t "hkq units convert 1 --"; t "hkq auth status stepCount hear"
            t "hkq characteristics "; t "hkq characteristics set dateOfBirth=1984-05-01 wheel"
            t "hkq --server h:1 --vers"; t "hkq types --vers"; t "hkq vers"
            """#
        let run = try await runChild(bash, ["--norc", "-c", script + "\n" + driver], input: "")
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count >= 10, "\(run.output)")
        guard lines.count >= 10 else { return }
        #expect(lines[0] == "units")
        #expect(lines[1] == "convert show")
        #expect(lines[2] == "table json csv chart ndjson")
        #expect(lines[3] == "stepCount")
        #expect(lines[4] == "--sort")
        #expect(lines[5] == "bash zsh fish")
        #expect(
            lines[6]
                == "--help --server --subject --token --token-file --format --time-format --fields --no-pager --tls "
                + "--tls-ca "
                + "--tls-fingerprint --tls-cert --tls-key --retry-for")
        #expect(lines[7].split(separator: " ").contains("heartRate"))
        #expect(lines[8] == "set")
        #expect(lines[9] == "wheelchairUse=no wheelchairUse=yes")
        #expect(lines.count >= 13, "\(run.output)")
        guard lines.count >= 13 else { return }
        #expect(lines[10] == "--version")
        #expect(lines[11] == "")
        #expect(lines[12] == "version")
    }

    /// zsh and fish check the syntax themselves when installed; otherwise the structure is checked here.
    @Test(arguments: [Shell.zsh, .fish]) func zshAndFishScriptsAreWellFormed(shell: Shell) async throws {
        let script = CompletionScript(program: .standard).script(for: shell)
        if let binary = tool(shell.rawValue) {
            let check = try await runChild(binary, shell == .zsh ? ["-n"] : ["--no-execute"], input: script)
            #expect(check.status == 0, "\(check.errors)")
        }
        let lines = script.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        func count(_ predicate: (String) -> Bool) -> Int { lines.filter(predicate).count }
        switch shell {
        case .zsh:
            #expect(lines.first == "#compdef hkq")
            #expect(script.contains("compdef _hkq hkq"))
            #expect(count { $0.hasSuffix("() {") } == count { $0 == "}" })
            #expect(count { $0.hasPrefix("case ") } == count { $0 == "esac" })
            #expect(count { $0.hasPrefix("if ") && !$0.hasSuffix("; fi") } == count { $0 == "fi" })
            #expect(count { $0.hasPrefix("for ") && !$0.hasSuffix("; done") } == count { $0 == "done" })
        default:
            #expect(script.hasSuffix("complete -c hkq -f -a '(__hkq_complete)'\n"))
            let opening = ["function ", "if ", "for ", "switch ", "while ", "begin"]
            #expect(count { line in opening.contains { line.hasPrefix($0) } } == count { $0 == "end" })
        }
        #expect(!script.contains("\\#("), "an interpolation left unexpanded")
    }

    @Test func manPageNamesEveryCommandAndOption() async {
        let result = await runHKQ(["help", "--man"])
        #expect(result.status == 0, "\(result.err)")
        let roff = result.out
        #expect(roff.hasPrefix(".TH HKQ 1 "))
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "ENVIRONMENT", "EXIT STATUS", "SEE ALSO"] {
            #expect(roff.contains("\n.SH \(section)\n"), "\(section)")
        }
        for entry in table.entries {
            #expect(roff.contains(".SS \"\(ManPage.escape(entry.words))\"\n"), "\(entry.words)")
            for option in entry.spec.options {
                #expect(
                    roff.contains(#"\fB\-\-"# + ManPage.escape(option.name) + #"\fR"#),
                    "\(entry.words) --\(option.name)")
            }
        }
        for option in GlobalOptions.specs { #expect(roff.contains(#"\fB\-\-"# + ManPage.escape(option.name))) }
        #expect(roff.contains(".TP\n" + #"\fB\-\-version\fR"# + "\n"), "--version among the global options")
        #expect(roff.contains(#".SS "version""#))
        for variable in ["HKQ_SERVER", "HKQ_SUBJECT", "HKQ_TOKEN", "HKQ_TOKEN_FILE"] {
            #expect(roff.contains(".B \(variable)\n"))
        }
        for status in ["0", "1", "64"] { #expect(roff.contains(".B \(status)\n")) }
        // No body line may start a request by accident, and no unescaped hyphen or backslash remains in text.
        for line in roff.split(separator: "\n") where !line.hasPrefix(".") {
            #expect(!line.hasPrefix("'"), "\(line)")
            #expect(!line.replacingOccurrences(of: #"\-"#, with: "").contains("-"), "\(line)")
        }
    }

    @Test func manPageRendersWithGroff() async throws {
        guard let groff = tool("groff") else {
            Issue.record("groff is not installed (apt-get install groff-base)")
            return
        }
        let roff = ManPage(program: .standard).roff
        let render = try await runChild(groff, ["-man", "-Tutf8", "-ww"], input: roff)
        #expect(render.status == 0)
        #expect(render.errors.isEmpty, "\(render.errors)")
        // grotty overstrikes bold text (X backspace X); keep the visible characters.
        let text = render.output.replacingOccurrences(of: ".\u{8}", with: "", options: .regularExpression)
        for section in [
            "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "GLOBAL OPTIONS", "ENVIRONMENT", "EXIT STATUS", "SEE ALSO",
        ] {
            #expect(text.contains("\n\(section)\n"), "\(section)")
        }
        #expect(text.contains("--time-format"))
        #expect(text.contains("HKQ_TOKEN_FILE"))
    }

    @Test func escapingGuardsRequestsBackslashesAndHyphens() {
        #expect(ManPage.escape(".start") == #"\&.start"#)
        #expect(ManPage.escape("'quoted'") == #"\&'quoted'"#)
        #expect(ManPage.escape(#"a\b --c"#) == #"a\eb \-\-c"#)
        #expect(ManPage.escape("× — é") == #"\[u00D7] \[u2014] \[u00E9]"#)
    }

    @Test func unknownShellAndManWithACommandAreUsageErrors() async {
        let shell = await runHKQ(["completion", "tcsh"])
        #expect(shell.status == 64)
        #expect(shell.err.contains("invalid value 'tcsh' for '<shell>'; expected bash, zsh or fish"), "\(shell.err)")
        let man = await runHKQ(["help", "--man", "stats"])
        #expect(man.status == 64)
        #expect(man.err.contains("--man prints the whole manual"))
    }
}
