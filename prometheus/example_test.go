package prometheus_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	kcacheprom "github.com/kcache/cache/prometheus"
)

// ExampleRegister registers every kcache metric with a registry: with controller-runtime, pass
// sigs.k8s.io/controller-runtime/pkg/metrics.Registry instead.
func ExampleRegister() {
	reg := prometheus.NewRegistry()
	if err := kcacheprom.Register(reg); err != nil {
		fmt.Println("register:", err)
		return
	}
	fmt.Println("registered")
	// Output: registered
}
