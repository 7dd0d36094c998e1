// Command release checks that kcache's published modules install the way a user installs them.
//
// It builds a file-system module proxy from the working tree — every published module at the
// release version, zipped with golang.org/x/mod/zip as a proxy would serve it (the files git
// tracks or would track, without nested modules) — then, for each published module and for
// all of them together, creates a fresh consumer module outside the repository, `go get`s the
// modules through that proxy with no replace directive, builds and runs a program that imports
// every package they export, and prints the consumer's resulting go line and Kubernetes library
// versions.
//
// It fails if a consumer's go line or a Kubernetes library ends up above what the module it
// imports declares (installing a module must not raise a user's versions past the module's
// stated minimums), or if the root module's declared minimums leave the range README promises
// (-root-max-go, -root-minor).
//
// Usage, from the repository root (`make release-check` does this):
//
//	cd test/release && go run . -repo ../.. -version v0.1.0 . clientgo sharding
//
// Third-party modules come from the module cache's download directory and then from
// $RELEASE_UPSTREAM_PROXY (default https://proxy.golang.org); the checksum database is not
// consulted for the kcache modules, which exist only in the local proxy.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// k8sModules are the Kubernetes libraries whose versions a consumer reports and checks.
var k8sModules = []string{"k8s.io/apimachinery", "k8s.io/api", "k8s.io/client-go"}

func main() {
	repo := flag.String("repo", ".", "repository root")
	version := flag.String("version", "v0.1.0", "release version of every published module")
	rootMaxGo := flag.String("root-max-go", "1.25", "highest go line the root module may declare (README's promise)")
	rootMinor := flag.String("root-minor", "v0.34", "k8s.io/apimachinery minor the root module must declare (README's promise)")
	keep := flag.Bool("keep", false, "keep the temporary proxy and consumers, and print where")
	flag.Parse()
	if flag.NArg() == 0 {
		fatalf("usage: release [flags] module-dir...")
	}
	if !semver.IsValid(*version) || semver.Canonical(*version) != *version {
		fatalf("-version %q is not a canonical semantic version", *version)
	}
	repoRoot, err := filepath.Abs(*repo)
	check(err)

	tmp, err := os.MkdirTemp("", "kcache-release-check-")
	check(err)
	if *keep {
		fmt.Println("keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	// The proxy.
	proxyDir := filepath.Join(tmp, "proxy")
	var mods []published
	for _, dir := range flag.Args() {
		m, err := publish(repoRoot, dir, *version, proxyDir)
		if err != nil {
			fatalf("%s: %v", dir, err)
		}
		mods = append(mods, m)
		fmt.Printf("proxy: %s@%s (%s, %d files)\n", m.path, *version, dir, m.files)
	}

	var failures []string
	for _, m := range mods {
		if m.dir == "." {
			failures = append(failures, checkRootPromise(m, *rootMaxGo, *rootMinor)...)
		}
	}

	env := consumerEnv(tmp, proxyDir)
	consumers := make([][]published, 0, len(mods)+1)
	for _, m := range mods {
		consumers = append(consumers, []published{m})
	}
	if len(mods) > 1 {
		consumers = append(consumers, mods)
	}
	for i, set := range consumers {
		dir := filepath.Join(tmp, "consumer"+strconv.Itoa(i))
		got, err := consume(dir, env, set, *version)
		if err != nil {
			fatalf("consumer of %s: %v", names(set), err)
		}
		fmt.Printf("consumer of %s: go %s", names(set), got.goLine)
		for _, p := range k8sModules {
			if v, ok := got.versions[p]; ok {
				fmt.Printf(", %s %s", p, v)
			}
		}
		fmt.Println()
		failures = append(failures, compare(set, got)...)
	}

	if len(failures) > 0 {
		for _, f := range failures {
			fmt.Fprintln(os.Stderr, "release-check: "+f)
		}
		os.Exit(1)
	}
	fmt.Printf("release-check: ok: %s install at %s without replace directives\n", names(mods), *version)
}

// published is one module written to the proxy, with what its go.mod declares.
type published struct {
	dir, path string
	goLine    string            // the go directive
	requires  map[string]string // the declared versions of k8sModules
	files     int
}

// publish writes dir's module at version to the proxy at proxyDir: list, .info, .mod and .zip.
func publish(repoRoot, dir, version, proxyDir string) (published, error) {
	modDir := filepath.Join(repoRoot, dir)
	data, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		return published{}, err
	}
	f, err := modfile.Parse(filepath.Join(modDir, "go.mod"), data, nil)
	if err != nil {
		return published{}, err
	}
	if f.Module == nil || f.Go == nil {
		return published{}, errors.New("go.mod has no module or go directive")
	}
	m := published{dir: dir, path: f.Module.Mod.Path, goLine: f.Go.Version, requires: map[string]string{}}
	for _, r := range f.Require {
		if slices.Contains(k8sModules, r.Mod.Path) {
			m.requires[r.Mod.Path] = r.Mod.Version
		}
		if strings.HasPrefix(r.Mod.Path, "github.com/kcache/cache") && r.Mod.Version != version {
			return published{}, fmt.Errorf("requires %s %s, not the release version %s", r.Mod.Path, r.Mod.Version, version)
		}
	}

	files, err := moduleFiles(repoRoot, dir)
	if err != nil {
		return published{}, err
	}
	m.files = len(files)
	escaped, err := module.EscapePath(m.path)
	if err != nil {
		return published{}, err
	}
	vdir := filepath.Join(proxyDir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return published{}, err
	}
	z, err := os.Create(filepath.Join(vdir, version+".zip"))
	if err != nil {
		return published{}, err
	}
	if err := zip.Create(z, module.Version{Path: m.path, Version: version}, files); err != nil {
		z.Close()
		return published{}, err
	}
	if err := z.Close(); err != nil {
		return published{}, err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	for name, content := range map[string][]byte{
		version + ".info": info,
		version + ".mod":  data,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), content, 0o644); err != nil {
			return published{}, err
		}
	}
	return m, nil
}

// moduleFiles lists the files of the module in dir: the files git tracks or would track
// (tracked, or untracked and not ignored), read from the working tree, leaving out the
// directories of nested modules, as a module zip does.
func moduleFiles(repoRoot, dir string) ([]zip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", dir)
	cmd.Dir = repoRoot
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	prefix := path.Clean(filepath.ToSlash(dir))
	var rel []string
	nested := map[string]bool{} // directories (module-relative) holding another module
	for _, p := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if p == "" {
			continue
		}
		if prefix != "." {
			p = strings.TrimPrefix(p, prefix+"/")
		}
		if _, err := os.Lstat(filepath.Join(repoRoot, dir, filepath.FromSlash(p))); err != nil {
			continue // deleted in the working tree
		}
		if path.Base(p) == "go.mod" && p != "go.mod" {
			nested[path.Dir(p)] = true
		}
		rel = append(rel, p)
	}
	var files []zip.File
	for _, p := range rel {
		inNested := false
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if nested[d] {
				inNested = true
				break
			}
		}
		if !inNested {
			files = append(files, diskFile{rel: p, abs: filepath.Join(repoRoot, dir, filepath.FromSlash(p))})
		}
	}
	return files, nil
}

// diskFile is a zip.File read from the working tree.
type diskFile struct{ rel, abs string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

// consumerEnv is the environment of the consumers: the local proxy first, then the module
// cache's download directory, then the upstream proxy; no checksum database for kcache; a
// module cache of their own, so the modules under test never mix with a cached copy, and
// -trimpath, so builds from that fresh module cache still hit the build cache.
func consumerEnv(tmp, proxyDir string) []string {
	gomodcache := strings.TrimSpace(goEnv("GOMODCACHE"))
	upstream := os.Getenv("RELEASE_UPSTREAM_PROXY")
	if upstream == "" {
		upstream = "https://proxy.golang.org"
	}
	proxies := []string{fileURL(proxyDir)}
	if gomodcache != "" {
		proxies = append(proxies, fileURL(filepath.Join(gomodcache, "cache", "download")))
	}
	proxies = append(proxies, upstream)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOMODCACHE", "GOWORK", "GOFLAGS":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GOPROXY="+strings.Join(proxies, ","),
		"GONOSUMDB=github.com/kcache",
		"GOPRIVATE=",
		"GONOPROXY=",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOWORK=off",
		"GOFLAGS=-mod=mod -modcacherw -trimpath",
	)
}

func fileURL(dir string) string { return "file://" + filepath.ToSlash(dir) }

// consumed is what a consumer module ended up with.
type consumed struct {
	goLine   string
	versions map[string]string
}

// consume creates a consumer module in dir that gets every module of set at version, imports
// all their importable packages, builds and runs, and reports its go line and Kubernetes versions.
func consume(dir string, env []string, set []published, version string) (consumed, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return consumed{}, err
	}
	// A deliberately low go line: whatever it becomes is what the modules raise it to.
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/consumer\n\ngo 1.22\n"), 0o644); err != nil {
		return consumed{}, err
	}
	args := []string{"get"}
	for _, m := range set {
		args = append(args, m.path+"@"+version)
	}
	if _, err := run(dir, env, "go", args...); err != nil {
		return consumed{}, err
	}
	var pkgs []string
	for _, m := range set {
		out, err := run(dir, env, "go", "list", "-f", `{{if and (ne .Name "main") (eq .Module.Path "`+m.path+`")}}{{.ImportPath}}{{end}}`, m.path+"/...")
		if err != nil {
			return consumed{}, err
		}
		for _, p := range strings.Fields(out) {
			if !strings.Contains(p, "/internal") {
				pkgs = append(pkgs, p)
			}
		}
	}
	if len(pkgs) == 0 {
		return consumed{}, errors.New("no importable packages")
	}
	var src bytes.Buffer
	src.WriteString("// Command consumer imports every package of the modules under test.\npackage main\n\nimport (\n\t\"fmt\"\n\n")
	for _, p := range pkgs {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	fmt.Fprintf(&src, ")\n\nfunc main() { fmt.Println(%q) }\n", fmt.Sprintf("imported %d packages", len(pkgs)))
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src.Bytes(), 0o644); err != nil {
		return consumed{}, err
	}
	if _, err := run(dir, env, "go", "mod", "tidy"); err != nil {
		return consumed{}, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil {
		return consumed{}, err
	} else if bytes.Contains(data, []byte("replace")) {
		return consumed{}, errors.New("consumer go.mod has a replace directive")
	}
	out, err := run(dir, env, "go", "run", ".")
	if err != nil {
		return consumed{}, err
	}
	fmt.Printf("consumer of %s: %s", names(set), out)

	var got consumed
	if got.goLine, err = run(dir, env, "go", "list", "-m", "-f", "{{.GoVersion}}"); err != nil {
		return consumed{}, err
	}
	got.goLine = strings.TrimSpace(got.goLine)
	all, err := run(dir, env, "go", "list", "-m", "all")
	if err != nil {
		return consumed{}, err
	}
	got.versions = map[string]string{}
	for _, line := range strings.Split(all, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && slices.Contains(k8sModules, f[0]) {
			got.versions[f[0]] = f[1]
		}
	}
	return got, nil
}

// compare reports where a consumer of set got a go line or a Kubernetes library above what
// the modules of set declare.
func compare(set []published, got consumed) []string {
	var failures []string
	maxGo := ""
	declared := map[string]string{}
	for _, m := range set {
		if maxGo == "" || compareGo(m.goLine, maxGo) > 0 {
			maxGo = m.goLine
		}
		for p, v := range m.requires {
			if w, ok := declared[p]; !ok || semver.Compare(v, w) > 0 {
				declared[p] = v
			}
		}
	}
	if compareGo(got.goLine, maxGo) > 0 {
		failures = append(failures, fmt.Sprintf("consumer of %s: go %s, above the declared go %s", names(set), got.goLine, maxGo))
	}
	for _, p := range k8sModules {
		v, ok := got.versions[p]
		if !ok {
			continue
		}
		want, ok := declared[p]
		if !ok {
			// Not required by the modules themselves: it came in through another library.
			continue
		}
		if semver.Compare(v, want) > 0 {
			failures = append(failures, fmt.Sprintf("consumer of %s: %s %s, above the declared %s", names(set), p, v, want))
		}
	}
	return failures
}

// checkRootPromise checks README's promise for the root module: its go line at most maxGo,
// k8s.io/apimachinery at minor.
func checkRootPromise(m published, maxGo, minor string) []string {
	var failures []string
	if compareGo(m.goLine, maxGo) > 0 && !strings.HasPrefix(m.goLine, maxGo+".") {
		failures = append(failures, fmt.Sprintf("%s declares go %s, above %s", m.path, m.goLine, maxGo))
	}
	if v := m.requires["k8s.io/apimachinery"]; semver.MajorMinor(v) != minor {
		failures = append(failures, fmt.Sprintf("%s declares k8s.io/apimachinery %s, not %s.x", m.path, v, minor))
	}
	return failures
}

// compareGo compares two go versions of the form 1.N or 1.N.P (no prereleases).
func compareGo(a, b string) int {
	return semver.Compare("v"+a, "v"+b)
}

func names(set []published) string {
	var n []string
	for _, m := range set {
		n = append(n, m.path)
	}
	return strings.Join(n, " + ")
}

func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// run runs name args in dir with env and returns its standard output; on failure the error
// carries the standard error.
func run(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "release-check: "+format+"\n", args...)
	os.Exit(1)
}
