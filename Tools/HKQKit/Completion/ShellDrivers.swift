/// The fixed part of each completion script: the code that walks the command line and completes the current
/// word from the generated tables (see ``CompletionScript``). `P` below stands for the function prefix.
extension Shell {
    /// The first line the shell requires, if any (zsh's `#compdef`).
    func preamble(program: String) -> String? {
        self == .zsh ? "#compdef \(program)" : nil
    }

    /// The driver for functions named `prefix_…`, registered for `program`.
    func driver(prefix P: String, program: String) -> String {
        switch self {
        case .bash: bashDriver(P, program)
        case .zsh: zshDriver(P, program)
        case .fish: fishDriver(P, program)
        }
    }

    private func bashDriver(_ P: String, _ program: String) -> String {
        #"""
        # The token of option $2 of command $1 (its own, else the global one); empty for a flag.
        \#(P)_kind() {
            local kind
            kind=$(\#(P)_option_value "$1|$2")
            [[ -n $kind ]] || kind=$(\#(P)_option_value "|$2")
            printf '%s' "$kind"
        }

        # The token of positional argument $2 (from 0) of command $1.
        \#(P)_argument() {
            local -a kinds=()
            local line
            while IFS= read -r line; do kinds+=("$line"); done < <(\#(P)_arguments "$1")
            local n=${#kinds[@]} i=$2
            if (( n > 0 )) && [[ ${kinds[n-1]} == variadic ]]; then
                n=$((n - 1))
                (( i >= n )) && i=$((n - 1))
            fi
            (( i < n )) && printf '%s' "${kinds[i]}"
        }

        # The first field of each line read.
        \#(P)_names() {
            local name rest
            while IFS=$'\t' read -r name rest; do printf '%s\n' "$name"; done
        }

        # Sets COMPREPLY to what token $1 offers for the word $2.
        \#(P)_offer() {
            case "$1" in
                words\ *) COMPREPLY=($(compgen -W "${1#words }" -- "$2")) ;;
                types) COMPREPLY=($(compgen -W "$(\#(P)_types)" -- "$2")) ;;
                files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$2")) ;;
                dirs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$2")) ;;
                *) COMPREPLY=() ;;
            esac
        }

        \#(P)() {
            local line="${COMP_LINE:0:COMP_POINT}" cur="" cmd="" word skip="" name
            local -i ended=0 count=0
            local -a words=()
            read -ra words <<< "$line"
            if [[ $line != *[[:space:]] && ${#words[@]} -gt 1 ]]; then
                cur="${words[${#words[@]}-1]}"
                unset 'words[${#words[@]}-1]'
            fi
            for word in "${words[@]:1}"; do
                if [[ -n $skip ]]; then skip=""; continue; fi
                if (( ended )); then count+=1; continue; fi
                case "$word" in
                    --) ended=1 ;;
                    --*=*|-h|--help) ;;
                    --*) [[ -n $(\#(P)_kind "$cmd" "${word#--}") ]] && skip="${word#--}" ;;
                    *)
                        if (( count == 0 )) && \#(P)_subcommands "$cmd" | \#(P)_names | grep -qxF -- "$word"; then
                            cmd="${cmd:+$cmd }$word"
                        else
                            count+=1
                        fi
                        ;;
                esac
            done
            if [[ -n $skip ]]; then
                \#(P)_offer "$(\#(P)_kind "$cmd" "$skip")" "$cur"
            elif (( ! ended )) && [[ $cur == --*=* ]]; then
                name="${cur%%=*}"
                \#(P)_offer "$(\#(P)_kind "$cmd" "${name#--}")" "${cur#*=}"
                # Without '=' in COMP_WORDBREAKS the whole word is replaced, so keep its option part.
                [[ ${COMP_WORDS[COMP_CWORD]} == "$cur" ]] && COMPREPLY=("${COMPREPLY[@]/#/$name=}")
            elif (( ! ended )) && [[ $cur == -* ]]; then
                local options
                options="$(\#(P)_options "$cmd" | \#(P)_names) --help"
                [[ -z $cmd ]] && options+=" --version"
                [[ -n $cmd ]] && options+=" $(\#(P)_options '' | \#(P)_names)"
                COMPREPLY=($(compgen -W "$options" -- "$cur"))
            elif (( count == 0 )) && [[ -n $(\#(P)_subcommands "$cmd") ]]; then
                COMPREPLY=($(compgen -W "$(\#(P)_subcommands "$cmd" | \#(P)_names)" -- "$cur"))
            else
                \#(P)_offer "$(\#(P)_argument "$cmd" "$count")" "$cur"
            fi
        }

        complete -F \#(P) \#(program)
        """#
    }

    private func zshDriver(_ P: String, _ program: String) -> String {
        #"""
        # The token of option $2 of command $1 (its own, else the global one); empty for a flag.
        \#(P)_kind() {
            local kind
            kind=$(\#(P)_option_value "$1|$2")
            [[ -n $kind ]] || kind=$(\#(P)_option_value "|$2")
            print -rn -- "$kind"
        }

        # The token of positional argument $2 (from 0) of command $1.
        \#(P)_argument() {
            local -a kinds
            kinds=("${(@f)$(\#(P)_arguments "$1")}")
            kinds=(${kinds:#})
            local -i n=${#kinds} i=$(( $2 + 1 ))
            if (( n > 0 )) && [[ ${kinds[n]} == variadic ]]; then
                n=$(( n - 1 ))
                (( i > n )) && i=$n
            fi
            (( i >= 1 && i <= n )) && print -rn -- "${kinds[i]}"
        }

        # Offers what token $1 names.
        \#(P)_offer() {
            case "$1" in
                words\ *) compadd -- ${=${1#words }} ;;
                types) compadd -- ${(f)"$(\#(P)_types)"} ;;
                files) _files ;;
                dirs) _files -/ ;;
                *) _message 'value' ;;
            esac
        }

        # Offers the `name<TAB>description` lines $2 under tag $1.
        \#(P)_describe() {
            local -a items
            items=("${(@f)2}")
            items=(${items:#})
            items=("${(@)items//$'\t'/:}")
            _describe -t "$1" "$1" items
        }

        \#(P)() {
            local cmd="" word skip="" name cur="${words[CURRENT]}"
            local -i ended=0 count=0
            local -a names
            for word in "${(@)words[2,CURRENT-1]}"; do
                if [[ -n $skip ]]; then skip=""; continue; fi
                if (( ended )); then count+=1; continue; fi
                case "$word" in
                    --) ended=1 ;;
                    --*=*|-h|--help) ;;
                    --*) [[ -n $(\#(P)_kind "$cmd" "${word#--}") ]] && skip="${word#--}" ;;
                    *)
                        names=("${(@f)$(\#(P)_subcommands "$cmd")}")
                        names=("${(@)names%%$'\t'*}")
                        if (( count == 0 && ${names[(Ie)$word]} )); then
                            cmd="${cmd:+$cmd }$word"
                        else
                            count+=1
                        fi
                        ;;
                esac
            done
            if [[ -n $skip ]]; then
                \#(P)_offer "$(\#(P)_kind "$cmd" "$skip")"
            elif (( ! ended )) && [[ $cur == --*=* ]]; then
                name="${${cur%%=*}#--}"
                compset -P '*='
                \#(P)_offer "$(\#(P)_kind "$cmd" "$name")"
            elif (( ! ended )) && [[ $cur == -* ]]; then
                local options="$(\#(P)_options "$cmd")"
                [[ -n $cmd ]] && options+=$'\n'"$(\#(P)_options '')"
                options+=$'\n--help\tShow help information.'
                [[ -z $cmd ]] && options+=$'\n--version\tShow the version.'
                \#(P)_describe option "$options"
            elif (( count == 0 )) && [[ -n $(\#(P)_subcommands "$cmd") ]]; then
                \#(P)_describe command "$(\#(P)_subcommands "$cmd")"
            else
                \#(P)_offer "$(\#(P)_argument "$cmd" "$count")"
            fi
        }

        if [[ $funcstack[1] == \#(P) ]]; then
            \#(P) "$@"
        else
            compdef \#(P) \#(program)
        fi
        """#
    }

    private func fishDriver(_ P: String, _ program: String) -> String {
        #"""
        # The token of option $argv[2] of command $argv[1] (its own, else the global one); empty for a flag.
        function \#(P)_kind
            set -l kind (\#(P)_option_value "$argv[1]|$argv[2]")
            test -n "$kind"; or set kind (\#(P)_option_value "|$argv[2]")
            printf '%s' "$kind"
        end

        # The token of positional argument $argv[2] (from 0) of command $argv[1].
        function \#(P)_argument
            set -l kinds (\#(P)_arguments "$argv[1]")
            set -l n (count $kinds)
            set -l i (math $argv[2] + 1)
            if test $n -gt 0; and test "$kinds[$n]" = variadic
                set n (math $n - 1)
                test $i -gt $n; and set i $n
            end
            if test $i -ge 1; and test $i -le $n
                printf '%s' "$kinds[$i]"
            end
        end

        # Prints what token $argv[1] offers for the value $argv[3], each candidate after $argv[2].
        function \#(P)_offer
            set -l candidates
            switch "$argv[1]"
                case 'words *'
                    set candidates (string split ' ' -- (string replace 'words ' '' -- "$argv[1]"))
                case types
                    set candidates (\#(P)_types)
                case files
                    set candidates (__fish_complete_path "$argv[3]")
                case dirs
                    set candidates (__fish_complete_directories "$argv[3]")
            end
            for candidate in $candidates
                printf '%s%s\n' "$argv[2]" "$candidate"
            end
        end

        function \#(P)_complete
            set -l words (commandline -opc)
            set -e words[1]
            set -l cur (commandline -ct)
            set -l cmd ''
            set -l count 0
            set -l ended 0
            set -l skip ''
            for word in $words
                if test -n "$skip"
                    set skip ''
                    continue
                end
                if test $ended = 1
                    set count (math $count + 1)
                    continue
                end
                switch $word
                    case '--'
                        set ended 1
                    case '--*=*' '-h' '--help'
                    case '--*'
                        set -l name (string replace -r '^--' '' -- $word)
                        set -l kind (\#(P)_kind "$cmd" $name)
                        test -n "$kind"; and set skip $name
                    case '*'
                        if test $count = 0; and contains -- $word (\#(P)_subcommands "$cmd" | string replace -r '\t.*' '')
                            set cmd (string trim -- "$cmd $word")
                        else
                            set count (math $count + 1)
                        end
                end
            end
            set -l subcommands (\#(P)_subcommands "$cmd")
            if test -n "$skip"
                set -l kind (\#(P)_kind "$cmd" $skip)
                \#(P)_offer "$kind" '' "$cur"
            else if test $ended = 0; and string match -q -- '--*=*' "$cur"
                set -l name (string replace -r '^--([^=]*)=.*' '$1' -- $cur)
                set -l kind (\#(P)_kind "$cmd" $name)
                \#(P)_offer "$kind" "--$name=" (string replace -r '^[^=]*=' '' -- $cur)
            else if test $ended = 0; and string match -q -- '-*' "$cur"
                \#(P)_options "$cmd"
                test -n "$cmd"; and \#(P)_options ''
                printf '%s\t%s\n' --help 'Show help information.'
                test -z "$cmd"; and printf '%s\t%s\n' --version 'Show the version.'
            else if test $count = 0; and set -q subcommands[1]
                printf '%s\n' $subcommands
            else
                set -l kind (\#(P)_argument "$cmd" $count)
                \#(P)_offer "$kind" '' "$cur"
            end
        end

        complete -c \#(program) -f -a '(\#(P)_complete)'
        """#
    }
}
