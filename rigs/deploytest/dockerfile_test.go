package deploytest

import (
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

// The image is built in CI elsewhere (no engine here); these checks catch
// the drift that would break that build or the image's defaults.
func TestDockerfile(t *testing.T) {
	df := string(read(t, "Dockerfile"))
	gomod := string(read(t, "go.mod"))

	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	img := regexp.MustCompile(`(?m)^FROM golang:(\d+\.\d+)\S* AS (\S+)`).FindStringSubmatch(df)
	if goVer == nil || img == nil {
		t.Fatalf("go.mod go directive %v, Dockerfile build stage %v", goVer, img)
	}
	if goVer[1] != img[1] {
		t.Errorf("Dockerfile builds with Go %s, go.mod wants %s", img[1], goVer[1])
	}
	if !strings.Contains(df, "COPY --from="+img[2]+" /out/rdmamesh /usr/local/bin/rdmamesh") {
		t.Error("the runtime stage must copy the binary from the build stage to /usr/local/bin/rdmamesh")
	}
	if !strings.Contains(df, `ENTRYPOINT ["/usr/local/bin/rdmamesh"]`) {
		t.Error(`manifests pass only args: the entrypoint must be ["/usr/local/bin/rdmamesh"]`)
	}
	for _, pkg := range []string{"libibverbs-dev", "libibverbs1", "ibverbs-providers"} {
		if !strings.Contains(df, pkg) {
			t.Errorf("Dockerfile lacks %s: the verbs engine needs it to build or to find the HCA's provider", pkg)
		}
	}
	mk := string(read(t, "Makefile"))
	if !regexp.MustCompile(`(?m)^build:`).MatchString(mk) {
		t.Error("the Dockerfile runs `make build`; the Makefile has no build target")
	}
	for _, v := range []string{"BIN", "VERSION", "COMMIT"} {
		if !regexp.MustCompile(`(?m)^` + v + `\s*\?=`).MatchString(mk) {
			t.Errorf("the Dockerfile overrides %s, which the Makefile does not define with ?=", v)
		}
	}

	// EXPOSE documents the default ports; keep them the config's.
	exposed := regexp.MustCompile(`(?m)^EXPOSE (.*)$`).FindStringSubmatch(df)
	if exposed == nil {
		t.Fatal("no EXPOSE line")
	}
	ports := map[string]bool{}
	for _, p := range strings.Fields(exposed[1]) {
		ports[strings.Split(p, "/")[0]] = true
	}
	d := config.Defaults()
	for _, key := range []string{"gossip.bind", "worker.api_listen", "coordinator.api_listen"} {
		_, port, err := net.SplitHostPort(d[key].(string))
		if err != nil || !ports[port] {
			t.Errorf("default %s port %s is not exposed (%v)", key, port, slices.Sorted(maps.Keys(ports)))
		}
	}
}
