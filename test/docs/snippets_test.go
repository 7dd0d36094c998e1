package docs

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// documents are the files whose Go blocks are compiled, relative to the repository root.
var documents = []string{"README.md", "MIGRATING.md", "SHARDING.md", "MEMORY.md"}

// A snippet is one fenced Go block of a document.
type snippet struct {
	doc  string // document, relative to the repository root
	line int    // line of the block's first code line in doc
	code string
	// prefix is what the test puts before code to make a file ("package snippet" for a block
	// that starts with its imports), and prefixLines its number of lines.
	prefix      string
	prefixLines int
	// parseOnly marks a block after a "<!-- snippet: parse only (reason) -->" line: it imports
	// a package this module cannot fetch, so it is parsed (imports included), not compiled.
	parseOnly bool
}

// dir is the package directory the snippet is compiled in, unique per block.
func (s snippet) dir() string {
	return fmt.Sprintf("%s_L%d", strings.TrimSuffix(s.doc, ".md"), s.line)
}

// TestSnippetsCompile type-checks and vets every Go block of the documents, each as a package
// of its own, against this module's dependencies (kcache's modules through replace
// directives, client-go, controller-runtime). A block is a complete file when it starts with
// a package clause; a block that starts with its imports (after comments) gets "package
// snippet" put before it, so it holds imports and declarations: the statements a document
// shows live in a function whose parameters are what the reader already has (a context, a
// REST config, a clientset). Any other Go block fails the test. A block preceded by the line
// "<!-- snippet: parse only (reason) -->" must parse as such a file, imports first, but is
// not compiled (its imports are outside this module's reach).
func TestSnippetsCompile(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var snippets []snippet
	for _, doc := range documents {
		found, err := extract(filepath.Join(root, doc), doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Errorf("%s: no Go block found", doc)
		}
		snippets = append(snippets, found...)
	}

	tmp := t.TempDir()
	if err := writeModule(tmp, root); err != nil {
		t.Fatal(err)
	}
	byDir := map[string]snippet{}
	compiled := 0
	for _, s := range snippets {
		if s.parseOnly {
			f, err := parser.ParseFile(token.NewFileSet(), s.dir()+".go", s.prefix+s.code, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s:%d: parse-only block does not parse: %v", s.doc, s.line, err)
			} else if len(f.Imports) == 0 {
				t.Errorf("%s:%d: parse-only block shows no imports", s.doc, s.line)
			}
			continue
		}
		compiled++
		byDir[s.dir()] = s
		if err := os.MkdirAll(filepath.Join(tmp, s.dir()), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, s.dir(), "snippet.go"), []byte(s.prefix+s.code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("go vet of the documents' Go blocks failed: %v\n%s", err, relocate(string(out), byDir))
	}
	t.Logf("%d Go blocks compiled and vetted, %d parsed", compiled, len(snippets)-compiled)
}

var (
	fence           = regexp.MustCompile("^```")
	parseOnlyMarker = regexp.MustCompile(`^<!-- snippet: parse only \(.+\) -->$`)
)

// extract returns the Go blocks of the document at path.
func extract(path, doc string) ([]snippet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out     []snippet
		inGo    bool
		inOther bool
		cur     snippet
		b       strings.Builder
		prev    string // the last non-blank line outside a block
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case inGo && fence.MatchString(line):
			inGo = false
			cur.code = b.String()
			if err := cur.classify(); err != nil {
				return nil, err
			}
			out = append(out, cur)
		case inGo:
			b.WriteString(line)
			b.WriteByte('\n')
		case inOther && fence.MatchString(line):
			inOther = false
		case line == "```go":
			inGo = true
			cur = snippet{doc: doc, line: n + 1, parseOnly: parseOnlyMarker.MatchString(prev)}
			b.Reset()
		case fence.MatchString(line):
			inOther = true
		case strings.TrimSpace(line) != "":
			prev = line
		}
	}
	if inGo || inOther {
		return nil, fmt.Errorf("%s: a fenced block is not closed", doc)
	}
	return out, sc.Err()
}

// classify sets the prefix that makes s a Go file, or reports a block that is not one.
func (s *snippet) classify() error {
	for _, l := range strings.Split(s.code, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "//"):
			continue
		case strings.HasPrefix(l, "package "):
			return nil
		case strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "import("):
			s.prefix, s.prefixLines = "package snippet\n\n", 2
			return nil
		default:
			return fmt.Errorf("%s:%d: a Go block starts with its imports or a package clause (so that it compiles as written), not %q", s.doc, s.line, l)
		}
	}
	return fmt.Errorf("%s:%d: a Go block starts with its imports or a package clause (so that it compiles as written)", s.doc, s.line)
}

// writeModule writes dir/go.mod and dir/go.sum: this module's, with the replace directives'
// relative paths made absolute.
func writeModule(dir, root string) error {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	here, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	rel := regexp.MustCompile(`=>\s+(\.\.?/\S*|\.\.?)`)
	text := rel.ReplaceAllStringFunc(string(mod), func(m string) string {
		p := strings.TrimSpace(strings.TrimPrefix(m, "=>"))
		return "=> " + filepath.Join(here, p)
	})
	text = regexp.MustCompile(`(?m)^module .*$`).ReplaceAllString(text, "module snippets")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(text), 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
}

// relocate rewrites vet's file positions (dir/snippet.go:L:C) to the documents' lines.
func relocate(out string, byDir map[string]snippet) string {
	pos := regexp.MustCompile(`(?:\./|\S*/)?([A-Za-z]+_L[0-9]+)/snippet\.go:([0-9]+)`)
	return pos.ReplaceAllStringFunc(out, func(m string) string {
		sub := pos.FindStringSubmatch(m)
		s, ok := byDir[sub[1]]
		if !ok {
			return m
		}
		l, _ := strconv.Atoi(sub[2])
		return fmt.Sprintf("%s:%d", s.doc, s.line+l-1-s.prefixLines)
	})
}
