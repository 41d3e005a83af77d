import HKQKit
import HealthModel
import Testing

/// `hkq characteristics`, `characteristics set` and `activity` without a server: help, usage and the checks made
/// before anything is sent.
@Suite struct ProfileCommandTests {
    @Test("characteristics runs by itself or with set; the help of set lists every key and its values")
    func help() async {
        let help = await runHKQ(["characteristics", "--help"])
        #expect(help.status == 0)
        #expect(help.out.contains("USAGE: hkq characteristics [<subcommand>]"), "\(help.out)")
        #expect(help.out.contains("SUBCOMMANDS:") && help.out.contains("set"), "\(help.out)")
        let setHelp = await runHKQ(["characteristics", "set", "--help"])
        #expect(setHelp.status == 0)
        for key in CharacteristicKey.allCases {
            #expect(setHelp.out.contains("  \(key.rawValue): "), "\(key) missing from\n\(setHelp.out)")
        }
        #expect(setHelp.out.contains("bloodType: aPositive, aNegative"), "\(setHelp.out)")
        #expect(setHelp.out.contains("<key=value> ..."), "\(setHelp.out)")
        let activity = await runHKQ(["activity", "--help"])
        #expect(activity.out.contains("--compare") && activity.out.contains("appleStandHour"), "\(activity.out)")
    }

    @Test("set refuses a missing '=', an unknown key and a value the key does not take, naming them (exit 64)")
    func refusals() async {
        let cases: [([String], String)] = [
            (["female"], "expected key=value, got 'female'"),
            (["eyeColor=blue"], "unknown characteristic 'eyeColor'; expected one of dateOfBirth, biologicalSex"),
            (["biologicalSex=femal"], "invalid value 'femal' for 'biologicalSex'; expected female, male, other"),
            (["dateOfBirth=1984-13-01"], "invalid value '1984-13-01' for 'dateOfBirth'; expected a date YYYY-MM-DD"),
            (["dateOfBirth=2023-02-29"], "invalid value '2023-02-29' for 'dateOfBirth'; expected a date YYYY-MM-DD"),
            (["dateOfBirth=0000-01-01"], "invalid value '0000-01-01' for 'dateOfBirth'; expected a date YYYY-MM-DD"),
            (["fitzpatrickSkinType=VII"], "expected I, II, III, IV, V, VI"),
            (["wheelchairUse=HKWheelchairUseMaybe"], "invalid value 'HKWheelchairUseMaybe' for 'wheelchairUse'"),
        ]
        for (arguments, message) in cases {
            let run = await runHKQ(["--server", "127.0.0.1:1", "characteristics", "set"] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.err)")
            #expect(run.err.contains(message), "\(arguments): \(run.err)")
        }
        let none = await runHKQ(["characteristics", "set"])
        #expect(none.status == 64 && none.err.contains("missing argument '<key=value>'"), "\(none.err)")
        let unknown = await runHKQ(["characteristics", "show"])
        #expect(unknown.status == 64 && unknown.err.contains("unknown subcommand 'show'"), "\(unknown.err)")
        let backwards = await runHKQ(["activity", "--from", "2024-02-01", "--through", "2024-01-01", "--tz", "UTC"])
        #expect(
            backwards.status == 64 && backwards.err.contains("--through must not be before --from"), "\(backwards.err)")
    }
}
