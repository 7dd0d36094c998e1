package features

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestDefaultsMatchClientGo(t *testing.T) {
	for _, f := range []Feature{WatchListClient, AtomicFIFO, UnlockWhileProcessingFIFO,
		InOrderInformersBatchProcess, InOrderInformers, InformerResourceVersion} {
		if !known[f].def {
			t.Errorf("%s: default off, client-go v0.37.2 has it on", f)
		}
	}
	if Enabled("NoSuchFeature") {
		t.Error("an unknown feature must be off")
	}
}

func TestReadEnv(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want map[Feature]bool
	}{
		{name: "nothing set", env: nil, want: map[Feature]bool{}},
		{
			name: "beta gates switched off",
			env: map[string]string{
				"KUBE_FEATURE_WatchListClient": "false",
				"KUBE_FEATURE_AtomicFIFO":      "0",
			},
			want: map[Feature]bool{WatchListClient: false, AtomicFIFO: false},
		},
		{
			name: "unparsable value ignored",
			env:  map[string]string{"KUBE_FEATURE_AtomicFIFO": "maybe"},
			want: map[Feature]bool{},
		},
		{
			name: "locked gate keeps its default",
			env:  map[string]string{"KUBE_FEATURE_InOrderInformers": "false"},
			want: map[Feature]bool{},
		},
		{
			name: "locked gate accepts its default",
			env:  map[string]string{"KUBE_FEATURE_InOrderInformers": "true"},
			want: map[Feature]bool{InOrderInformers: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := readEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for f, v := range tc.want {
				if got[f] != v {
					t.Errorf("%s = %v, want %v", f, got[f], v)
				}
			}
		})
	}
}

func TestSetForTestingRestores(t *testing.T) {
	before := Enabled(AtomicFIFO)
	t.Run("override", func(t *testing.T) {
		SetForTesting(t, AtomicFIFO, !before)
		if Enabled(AtomicFIFO) == before {
			t.Fatal("override not applied")
		}
		t.Run("nested", func(t *testing.T) {
			SetForTesting(t, AtomicFIFO, before)
			if Enabled(AtomicFIFO) != before {
				t.Fatal("nested override not applied")
			}
		})
		if Enabled(AtomicFIFO) == before {
			t.Fatal("nested override not restored to the outer one")
		}
	})
	if Enabled(AtomicFIFO) != before {
		t.Fatal("override not restored")
	}
}
