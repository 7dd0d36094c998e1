package sharding

import "k8s.io/apimachinery/pkg/labels"

// parseSelector parses a selector string the way the API server does.
func parseSelector(s string) (labels.Selector, error) { return labels.Parse(s) }

func labelSet(m map[string]string) labels.Set { return labels.Set(m) }
