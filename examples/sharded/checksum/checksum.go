// Package checksum is the controller of examples/sharded: for every ConfigMap it reconciles,
// it keeps a Secret "<name>-checksum", controlled by the ConfigMap, holding the SHA-256 of the
// ConfigMap's data. It is the same for the kcache and the controller-runtime variants.
package checksum

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// SecretSuffix ends the name of the Secret that holds a ConfigMap's checksum.
const SecretSuffix = "-checksum"

// SecretName returns the name of the Secret that holds cm's checksum.
func SecretName(cm string) string { return cm + SecretSuffix }

// Of returns the hex SHA-256 of data, over its keys in order.
func Of(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(data[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Desired returns the Secret cm should have.
func Desired(cm *corev1.ConfigMap) *corev1.Secret {
	yes := true
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cm.Namespace,
			Name:      SecretName(cm.Name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: &yes,
			}},
		},
		StringData: map[string]string{"sha256": Of(cm.Data)},
	}
}

// Reconcile makes cm's Secret hold its checksum. current is the Secret from the cache (nil if
// there is none). It writes only when the checksum differs.
func Reconcile(ctx context.Context, secrets corev1client.SecretsGetter, cm *corev1.ConfigMap, current *corev1.Secret) error {
	want := Desired(cm)
	if current == nil {
		_, err := secrets.Secrets(cm.Namespace).Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// Our cache is behind: the Secret's event (an Add when it enters the cache) brings
			// the ConfigMap back, provided the Secrets' handler enqueues it (EnqueueOwner).
			return nil
		}
		return err
	}
	if string(current.Data["sha256"]) == want.StringData["sha256"] {
		return nil
	}
	updated := current.DeepCopy()
	updated.StringData = want.StringData
	_, err := secrets.Secrets(cm.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
	return err
}
