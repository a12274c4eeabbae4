# bash completion for gotrace(8)                                  -*- shell-script -*-
#
# Completes options, the values of -f (the formats gotrace itself lists), -d and -B,
# files, commands and PIDs, and, in a word starting with go: (also quoted: -e
# 'go:main.ad<TAB>), the Go functions of the target named by -b BIN, -c 'CMD ...' (its
# first word) or -p PID (/proc/PID/exe), as `gotrace -l 'go:PREFIX*' -b BIN` lists them;
# after go:FUNC: (or when one function is left) its :entry and :return probes. Nothing
# here prints errors: a missing target or gotrace completes nothing. In a quoted word
# readline closes the quote after a complete probe name, as it does for any completion.
# Installed as share/bash-completion/completions/gotrace; or source it from ~/.bashrc.

# The shell words of the command line: bash splits COMP_WORDS at every character of
# COMP_WORDBREAKS (: = ( @ ...), so go:main.add is three words there. Joins words that
# touch in COMP_LINE back into one. Sets _gt_words and _gt_cword.
_gotrace_words()
{
    local line=${COMP_LINE-} w i j=-1 blank
    _gt_words=()
    _gt_cword=0
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        blank=1
        if [[ -n ${COMP_LINE-} ]]; then
            [[ $line == [[:blank:]]* ]] || blank=0
            line=${line#"${line%%[![:blank:]]*}"}
            if [[ $line == "$w"* ]]; then
                line=${line#"$w"}
            else
                blank=1 # the line does not match: do not guess
            fi
        fi
        if ((blank || j < 1)); then
            ((j++))
            _gt_words[j]=$w
        else
            _gt_words[j]+=$w
        fi
        ((i == COMP_CWORD)) && _gt_cword=$j
    done
    return 0
}

# A word as the shell would see it: one level of quotes taken off, ~/ expanded.
_gotrace_unquote()
{
    local w=$1
    case $w in
    \'*) w=${w#\'} w=${w%\'} ;;
    \"*) w=${w#\"} w=${w%\"} ;;
    esac
    [[ $w == \~/* ]] && w=$HOME/${w#\~/}
    printf '%s' "$w"
}

# The target binary the command line names: -b / --binary, else -c's command, else -p's
# /proc/PID/exe (main.c's order). Prints nothing when there is none.
_gotrace_target()
{
    local i w next bin="" cmd="" pid=""
    for ((i = 1; i < ${#_gt_words[@]}; i++)); do
        ((i == _gt_cword)) && continue
        w=${_gt_words[i]}
        next=""
        ((i + 1 != _gt_cword)) && next=${_gt_words[i + 1]-}
        case $w in
        -b | --binary) bin=$(_gotrace_unquote "$next") ;;
        --binary=*) bin=$(_gotrace_unquote "${w#--binary=}") ;;
        -b?*) bin=$(_gotrace_unquote "${w#-b}") ;;
        -c) cmd=$(_gotrace_unquote "$next") ;;
        -c?*) cmd=$(_gotrace_unquote "${w#-c}") ;;
        -p) pid=$next ;;
        -p?*) pid=${w#-p} ;;
        esac
    done
    if [[ -z $bin && -n $cmd ]]; then
        read -r bin _ <<<"$cmd"
        bin=${bin//[\'\"]/}
        [[ $bin == \~/* ]] && bin=$HOME/${bin#\~/}
        [[ $bin == */* ]] || bin=$(type -P -- "$bin" 2>/dev/null)
    fi
    if [[ -z $bin && $pid =~ ^[0-9]+$ ]]; then
        bin=/proc/$pid/exe
    fi
    [[ -n $bin && -f $bin && -r $bin ]] && printf '%s' "$bin"
    return 0
}

# The Go functions of binary $2 whose names start with $3, one a line, as gotrace $1
# lists them (the go: prefix, the DWARF signature and "(inlined)" taken off).
_gotrace_funcs()
{
    local gt=$1 bin=$2 prefix=$3 to=()
    [[ -n $bin ]] || return 0
    type -P timeout >/dev/null 2>&1 && to=(timeout 3)
    "${to[@]}" "$gt" -l "go:$prefix*" -b "$bin" 2>/dev/null </dev/null |
        sed -e 's/^go://' -e 's/ (inlined)$//' -e 's/\([^.]\)(.*$/\1/'
}

# The output formats, as gotrace's error for an unknown one lists them.
_gotrace_formats()
{
    local line f
    line=$("$1" -f '?' 2>&1 </dev/null | sed -n "s/^Valid formats: //p")
    read -r -a f <<<"${line//[\',]/ }"
    ((${#f[@]})) || f=(text json folded pprof)
    printf '%s\n' "${f[@]}"
}

# Candidates for a go: probe word $2 (no quotes), full words, one a line.
_gotrace_go()
{
    local gt=$1 word=go: rest=${2#go:} head bin
    if [[ $rest == *:* ]]; then
        head=${rest%%:*}
        if [[ -f $head ]]; then
            # go:PATH:FUNC
            bin=$head
            rest=${rest#*:}
            word=go:$head:
            [[ $rest == *:* ]] || {
                _gotrace_funcs "$gt" "$bin" "$rest" | sed "s|^|go:$head:|"
                return 0
            }
            head=${rest%%:*}
        fi
        # go:[PATH:]FUNC: its entry and return probes (FILE.go:LINE has no names)
        [[ $head == *.go ]] && return 0
        printf '%s\n' "$word${rest%%:*}:entry" "$word${rest%%:*}:return"
        return 0
    fi
    bin=$(_gotrace_target)
    _gotrace_funcs "$gt" "$bin" "$rest" | sed 's/^/go:/'
}

# One function left: its probes instead, so that the name is not taken as complete (and
# an open quote not closed) before its :entry or :return.
_gotrace_probes()
{
    local f
    mapfile -t f
    if ((${#f[@]} == 1)) && [[ ${f[0]} != *: ]]; then
        printf '%s\n' "${f[0]}:entry" "${f[0]}:return"
    elif ((${#f[@]})); then
        printf '%s\n' "${f[@]}"
    fi
}

_gotrace()
{
    local _gt_words _gt_cword full cur prev text lead="" gt cands=() c prefix nospace=0 files=0
    _gotrace_words
    full=${_gt_words[_gt_cword]-}
    prev=${_gt_words[_gt_cword - 1]-}
    # what readline replaces: bash passes it as $2 (the part after the last break
    # character, or after an opening quote)
    if (($# >= 2)); then
        text=$2
    else
        text=${COMP_WORDS[COMP_CWORD]-}
        [[ $text == [\'\"]* ]] && text=${text:1}
        [[ -n ${COMP_WORDBREAKS-} && $text == ["$COMP_WORDBREAKS"]* &&
            -z ${text//["$COMP_WORDBREAKS"]/} ]] && text=""
    fi
    cur=$full
    [[ $cur == [\'\"]* ]] && cur=${cur:1}
    gt=${_gt_words[0]}
    [[ $gt == \~/* ]] && gt=$HOME/${gt#\~/}
    type -P -- "$gt" >/dev/null 2>&1 || gt=gotrace

    # --binary=PATH and the like: complete PATH as the value of --binary
    if [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        lead=${cur%%=*}=
        cur=${cur#*=}
    fi

    if [[ $cur == go:* ]]; then
        mapfile -t cands < <(_gotrace_go "$gt" "$cur" | _gotrace_probes)
        nospace=1
    else
        case $prev in
        -f) mapfile -t cands < <(_gotrace_formats "$gt") ;;
        -d) cands=(ast types sites ir bpf jit) ;;
        -B) cands=(full line none) ;;
        -p) mapfile -t cands < <(cd /proc 2>/dev/null && compgen -G '[0-9]*') ;;
        -c)
            mapfile -t cands < <(compgen -c -- "$cur" | sort -u)
            files=1
            ;;
        -b | --binary | -o | --include)
            files=1
            ;;
        -I)
            mapfile -t cands < <(compgen -d -- "$cur")
            files=2
            ;;
        -l | --funcgraph | --exclude | --drilldown)
            mapfile -t cands < <(_gotrace_funcs "$gt" "$(_gotrace_target)" "$cur")
            nospace=1
            ;;
        -e | --args | --rets | --interval | --max-overhead) ;;
        *)
            if [[ $cur == -* ]]; then
                cands=(-e -c -p -b -l -f -o -d -v -q -k -kk -B -I -h -V
                    --binary --dry-run --no-cache --unsafe --parse-only --funcgraph
                    --drilldown --args --rets --summary --interval --no-color --no-oncpu --otlp
                    --no-warnings
                    --info --include
                    --exclude --max-overhead --output --list --probe-filter --help --version)
            else
                files=1
            fi
            ;;
        esac
    fi
    if ((files == 1)); then
        mapfile -t -O "${#cands[@]}" cands < <(compgen -f -- "$cur")
    fi
    ((files)) && compopt -o filenames 2>/dev/null

    # the candidates that extend the word, made relative to what readline replaces (the
    # word less what comes before the last break character in it)
    prefix=""
    [[ $lead$cur == *"$text" ]] && prefix=${lead}${cur} prefix=${prefix%"$text"}
    COMPREPLY=()
    for c in "${cands[@]}"; do
        c=$lead$c
        [[ $c == "$lead$cur"* ]] && COMPREPLY+=("${c#"$prefix"}")
    done
    # a function name is followed by :entry, :return or more of the name
    ((nospace)) && compopt -o nospace 2>/dev/null
    return 0
}

complete -F _gotrace gotrace
