// values: print()'s oracle (issue 24). A struct shaped like net/http.Request (nested
// structs, four maps of slices before more fields and a fifth map, interfaces, an array, time.Duration, net.IP, a float in
// memory, an unexported Duration that fmt prints as an integer) passed by value on the
// stack, a struct as big as cobra.Command (hundreds of bytes, function fields, slices of
// pointers) through a pointer, and a Duration alone. Each callee prints its argument
// with fmt's %+v on stderr ("P TAG ..."); test_gomatrix has gotrace print the same.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

type URL struct {
	Scheme, Host, Path string
	User               *Userinfo
	ForceQuery         bool
}

type Userinfo struct{ username string }

type Item struct {
	Name  string
	Price float64
	Qty   int32
}

// Request: Remote's [4]uint8 (an array of more than one element) puts it on the stack
type Request struct {
	Method           string
	URL              *URL
	Proto            string
	ProtoMajor       int
	ProtoMinor       int
	Header           map[string][]string
	Body             any
	ContentLength    int64
	TransferEncoding []string
	Close            bool
	Host             string
	Form             map[string][]string // as net/http.Request's: four maps of slices
	PostForm         map[string][]string
	Trailer          map[string][]string
	Remote           [4]uint8
	Timeout          time.Duration
	Deadline         time.Duration
	Weight           float64
	Items            []Item
	Err              error
	Addr             net.IP
	Addr6            net.IP
	Bits             [8]int16
	Start            time.Time
	cancel           func()
	wait             time.Duration
	started          time.Time // unexported: fmt prints its fields
	other            map[string]string // a fifth map, as Request.otherValues (nil)
}

// Conn: a field promoted from an embedded struct (nats-server's client.pa), []byte
// printed with %s
type pubArg struct {
	subject []byte
	size    int
}

type parseState struct {
	state int
	pa    pubArg
}

type DialError struct{ error }

type Conn struct {
	id int
	parseState
}

//go:noinline
func parse(c *Conn, msg []byte) int {
	fmt.Fprintf(out, "P parse %s %d %s %d\n", c.pa.subject, c.pa.size, msg, c.state)
	return len(msg)
}

type FlagSet struct {
	Usage      func()
	name       string
	parsed     bool
	actual     map[string]*Flag
	formal     map[string]*Flag
	args       []string
	output     any
	SortFlags  bool
	normalized func(f *FlagSet, name string) string
}

type Flag struct{ Name, Shorthand, Usage string }

// Command: about the size and shape of cobra.Command
type Command struct {
	Use                        string
	Aliases                    []string
	SuggestFor                 []string
	Short                      string
	GroupID                    string
	Long                       string
	Example                    string
	ValidArgs                  []string
	ValidArgsFunction          func(cmd *Command, args []string) ([]string, int)
	Args                       func(cmd *Command, args []string) error
	ArgAliases                 []string
	BashCompletionFunction     string
	Deprecated                 string
	Annotations                map[string]string
	Version                    string
	PersistentPreRun           func(cmd *Command, args []string)
	PersistentPreRunE          func(cmd *Command, args []string) error
	PreRun                     func(cmd *Command, args []string)
	PreRunE                    func(cmd *Command, args []string) error
	Run                        func(cmd *Command, args []string)
	RunE                       func(cmd *Command, args []string) error
	PostRun                    func(cmd *Command, args []string)
	PostRunE                   func(cmd *Command, args []string) error
	PersistentPostRun          func(cmd *Command, args []string)
	PersistentPostRunE         func(cmd *Command, args []string) error
	commandgroups              []*Group
	args                       []string
	flagErrorBuf               *int
	flags                      *FlagSet
	pflags                     *FlagSet
	lflags                     *FlagSet
	iflags                     *FlagSet
	parentsPflags              *FlagSet
	globNormFunc               func(f *FlagSet, name string) string
	usageFunc                  func(*Command) error
	usageTemplate              string
	flagErrorFunc              func(*Command, error) error
	helpTemplate               string
	helpFunc                   func(*Command, []string)
	helpCommand                *Command
	helpCommandGroupID         string
	completionCommandGroupID   string
	versionTemplate            string
	errPrefix                  string
	inReader                   any
	outWriter                  any
	errWriter                  any
	FParseErrWhitelist         struct{ UnknownFlags bool }
	CompletionOptions          struct{ DisableDefaultCmd, DisableNoDescFlag, HiddenDefaultCmd bool }
	commandsAreSorted          bool
	commandCalledAs            struct {
		name   string
		called bool
	}
	ctx                        any
	commands                   []*Command
	parent                     *Command
	commandsMaxUseLen          int
	commandsMaxCommandPathLen  int
	commandsMaxNameLen         int
	TraverseChildren           bool
	Hidden                     bool
	SilenceErrors              bool
	SilenceUsage               bool
	DisableFlagParsing         bool
	DisableAutoGenTag          bool
	DisableFlagsInUseLine      bool
	DisableSuggestions         bool
	SuggestionsMinimumDistance int
}

type Group struct{ ID, Title string }

//go:noinline
func serve(r Request, n int) int {
	fmt.Fprintf(out, "P req %+v\n", r)
	fmt.Fprintf(out, "HK %v %d %d\n", r.Header["X-Ids"], len(r.Header["Accept"]),
		len(r.Header["Nope"]))
	// %x of a Duration would be its String()'s bytes: the integer's, as gotrace's %x
	fmt.Fprintf(out, "P n %d %d %x %x\n", r.Deadline, r.ContentLength, int64(r.Timeout),
		int64(r.Deadline))
	fmt.Fprintf(out, "P t %T %T %T %T %T %v\n", r.Items, r.Method, n, r.URL, r.Timeout,
		r.Items[0].Price)
	return n + len(r.Items)
}

//go:noinline
func execute(c *Command, args []string) int {
	fmt.Fprintf(out, "P cmd %+v\n", c)
	return len(args) + c.commandsMaxNameLen
}

// gotrace prints an array's first 8 elements, then " ..." (docs/language.md)
//
//go:noinline
func bits(b [12]int16) {
	fmt.Fprintf(out, "P bits %s ...]\n", strings.TrimSuffix(fmt.Sprint(b[:8]), "]"))
}

//go:noinline
func wait(d time.Duration, t time.Duration, at time.Time) {
	fmt.Fprintf(out, "P dur %+v %+v %+v\n", d, t, at)
}

func init() {
	extras = append(extras, func() {
		r := Request{Method: "GET", URL: &URL{Scheme: "https", Host: "example.com", Path: "/a"},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: "hello",
			Header: map[string][]string{"Accept": {"*/*"}, "X-Ids": {"1", "22"}, "Empty": nil},
			ContentLength: 5000000000, TransferEncoding: []string{"chunked", "gzip"},
			Host: "example.com", Form: map[string][]string{"q": {"go"}, "page": {"2"}},
			PostForm: map[string][]string{"name": {"gopher"}},
			Trailer:  map[string][]string{"Expires": {"never"}, "X-Sum": {"a", "b"}},
			Remote:   [4]uint8{10, 0, 0, 1}, Timeout: 3 * time.Second,
			Deadline: 90*time.Second + 250*time.Millisecond, Weight: 0.5,
			Items: []Item{{"pen", 1.25, 3}, {"ink", -2e-7, -1}},
			Err:   errors.New("boom"), Addr: net.IPv4(192, 168, 1, 20),
			Addr6: net.ParseIP("2001:db8::1"), Bits: [8]int16{1, -2, 3, 4, 5, 6, 7, 8},
			Start:  time.Date(2009, 11, 10, 23, 0, 0, 5, time.UTC),
			cancel: func() {}, wait: 1500 * time.Millisecond}
		r.started = r.Start
		serve(r, 1)
		// errors whose Error() is one text: gotrace prints it as %v does
		r2 := Request{Method: "POST", Items: []Item{{"x", 3.5, 1}}, Timeout: 1500 * time.Microsecond, Deadline: -2 * time.Hour,
			Err: context.DeadlineExceeded, Body: os.ErrDeadlineExceeded}
		serve(r2, 2)

		// errors that wrap others (the standard library's wrappers, an Errno at the end)
		r3 := Request{Method: "GET", Items: []Item{{"y", 1, 1}},
			Err: &fs.PathError{Op: "open", Path: "/etc/nope.conf", Err: syscall.ENOENT},
			Body: syscall.Errno(1000)}
		serve(r3, 3)
		r4 := Request{Method: "GET", Items: []Item{{"z", 2, 2}},
			Err: &url.Error{Op: "Get", URL: "http://127.0.0.1:1/x?q=\"a b\"", Err: &net.OpError{
				Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
				Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}}
		serve(r4, 4)
		r5 := Request{Method: "PUT", Items: []Item{{"w", 3, 3}},
			Err: &net.OpError{Op: "read", Net: "tcp",
				Source: &net.TCPAddr{IP: net.ParseIP("::1"), Port: 5000},
				Addr:   &net.TCPAddr{IP: net.ParseIP("2001:db8::7"), Port: 443},
				Err:    syscall.ECONNRESET}}
		serve(r5, 5)
		r6 := Request{Method: "GET", Items: []Item{{"v", 4, 4}},
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host",
				Name: "nope.invalid", Server: "127.0.0.53:53", IsNotFound: true}}}
		serve(r6, 6)
		// a struct embedding error, whose Error() is the promoted one (Caddy's DialError)
		r7 := Request{Method: "GET", Items: []Item{{"u", 5, 5}},
			Err: DialError{&net.OpError{Op: "dial", Net: "tcp",
				Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
				Err:  os.NewSyscallError("connect", syscall.ECONNREFUSED)}}}
		serve(r7, 7)

		fs := &FlagSet{name: "docker", SortFlags: true, args: []string{"--version"},
			formal: map[string]*Flag{"help": {Name: "help", Shorthand: "h"}}}
		root := &Command{Use: "docker [OPTIONS] COMMAND [ARG...]", Short: "A self-sufficient runtime for containers",
			Version: "27.0.3", Aliases: []string{"d"}, flags: fs, pflags: fs,
			Annotations: map[string]string{"category": "mgmt", "z": "", "a": "1"},
			commandgroups:             []*Group{{ID: "mgmt", Title: "Management Commands"}},
			SilenceUsage:              true, SilenceErrors: true, TraverseChildren: true,
			usageTemplate:             "Usage: {{.UseLine}}", commandsMaxNameLen: 9,
			SuggestionsMinimumDistance: 2,
			Run:                       func(cmd *Command, args []string) {}}
		child := &Command{Use: "run", parent: root, Short: "Create and run a new container"}
		root.commands = []*Command{child}
		root.commandCalledAs.name = "docker"
		execute(root, []string{"--version"})

		parse(&Conn{id: 7, parseState: parseState{state: 3, pa: pubArg{[]byte("gt.subj"), 5}}},
			[]byte("hello\tworld"))
		bits([12]int16{-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12})
		wait(3*time.Second, 0, time.Now())
		wait(-1*time.Nanosecond, 26*time.Hour+3*time.Minute+4*time.Second+5*time.Microsecond,
			time.Date(2024, 2, 29, 12, 30, 45, 120000000, time.FixedZone("CET", 3600)))
	})
}
