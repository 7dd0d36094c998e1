package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// labelIndexFunc indexes an object by the value of one of its labels.
func labelIndexFunc(label string) func(obj interface{}) ([]string, error) {
	return func(obj interface{}) ([]string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if v, ok := m.GetLabels()[label]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// smallPod is a pod with only metadata: name, namespace, resource version and two labels.
func smallPod(i, namespaces int, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       "ns-" + strconv.Itoa(i%namespaces),
		Name:            "pod-" + strconv.Itoa(i),
		UID:             uidFor(i),
		ResourceVersion: rv,
		Labels:          map[string]string{"app": "app-" + strconv.Itoa(i%100), "tier": "tier-" + strconv.Itoa(i%7)},
	}}
}

// realisticPod is a pod as a kube-apiserver returns it from a typical deployment: owner
// reference, managedFields, three containers with resources and probes, a scheduled and
// running status with container statuses and conditions. Roughly 6 KB as JSON.
func realisticPod(i, namespaces int, rv string) *v1.Pod {
	p := smallPod(i, namespaces, rv)
	ts := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p.GenerateName = "app-" + strconv.Itoa(i%100) + "-7d4f8b9c6-"
	p.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z", "prometheus.io/scrape": "true"}
	p.CreationTimestamp = ts
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: p.GenerateName[:len(p.GenerateName)-1], UID: uidFor(i / 3)}}
	fields := metav1.NewFieldsV1(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"x\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:resources":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:terminationGracePeriodSeconds":{}}}`)
	status := metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}`)
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", FieldsV1: fields},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", FieldsV1: status, Subresource: "status"},
	}
	res := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("256Mi")},
	}
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10}
	for k, name := range []string{"main", "sidecar", "metrics"} {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{
			Name:            name,
			Image:           "registry.example.com/team/" + name + ":v1.2." + strconv.Itoa(k),
			Args:            []string{"--port=8080", "--log-level=info"},
			Env:             []v1.EnvVar{{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}, {Name: "MODE", Value: "prod"}},
			Ports:           []v1.ContainerPort{{Name: "http", ContainerPort: int32(8080 + k), Protocol: v1.ProtocolTCP}},
			Resources:       res,
			LivenessProbe:   probe,
			ReadinessProbe:  probe,
			VolumeMounts:    []v1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			ImagePullPolicy: v1.PullIfNotPresent,
		})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, v1.ContainerStatus{
			Name: name, Ready: true, Image: "registry.example.com/team/" + name + ":v1.2." + strconv.Itoa(k),
			ImageID:     "registry.example.com/team/" + name + "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			ContainerID: "containerd://" + fmt.Sprintf("%064x", i*3+k),
			State:       v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: ts}},
		})
	}
	p.Spec.Volumes = []v1.Volume{{Name: "kube-api-access", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
	p.Spec.NodeName = "node-" + strconv.Itoa(i%500)
	p.Spec.ServiceAccountName = "default"
	p.Spec.Tolerations = []v1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}
	p.Status.Phase = v1.PodRunning
	p.Status.HostIP = "10.0." + strconv.Itoa(i%250) + ".1"
	p.Status.PodIP = "10.1." + strconv.Itoa(i/250%250) + "." + strconv.Itoa(i%250)
	p.Status.PodIPs = []v1.PodIP{{IP: p.Status.PodIP}}
	p.Status.StartTime = &ts
	p.Status.QOSClass = v1.PodQOSBurstable
	for _, c := range []v1.PodConditionType{v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: c, Status: v1.ConditionTrue, LastTransitionTime: ts})
	}
	return p
}

// configMap is a small ConfigMap with one data entry.
func configMap(i, namespaces int, rv string) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       "ns-" + strconv.Itoa(i%namespaces),
			Name:            "cm-" + strconv.Itoa(i),
			UID:             uidFor(i),
			ResourceVersion: rv,
		},
		Data: map[string]string{"config": "value-" + rv},
	}
}

// realisticConfigMap is a ConfigMap as a kube-apiserver returns it for an application's
// configuration applied with kubectl: recommended labels, kubectl's last-applied-configuration
// annotation (the object again, as JSON), a managedFields entry, a config file of about 1.3 KB and
// two small settings. Roughly 4 KB as JSON.
func realisticConfigMap(i, namespaces int, rv string) *v1.ConfigMap {
	cm := configMap(i, namespaces, rv)
	ts := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	app := "app-" + strconv.Itoa(i%100)
	cm.CreationTimestamp = ts
	cm.Labels = map[string]string{
		"app.kubernetes.io/name": app, "app.kubernetes.io/instance": app + "-" + strconv.Itoa(i%7),
		"app.kubernetes.io/managed-by": "kubectl", "app.kubernetes.io/part-of": "team-" + strconv.Itoa(i%13),
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "# %s configuration, generated\nserver:\n  port: 8080\n  readTimeout: 30s\n  writeTimeout: 30s\n", app)
	for k := range 12 {
		fmt.Fprintf(&conf, "feature%02d:\n  enabled: %t\n  threshold: %d\n  endpoint: https://svc-%d.%s.svc.cluster.local:8443/v1\n",
			k, (i+k)%2 == 0, (i*7+k)%1000, k, cm.Namespace)
	}
	cm.Data = map[string]string{
		"application.yaml": conf.String(),
		"LOG_LEVEL":        "info",
		"REPLICA_ID":       strconv.Itoa(i),
	}
	cm.Annotations = map[string]string{
		"kubectl.kubernetes.io/last-applied-configuration": fmt.Sprintf(
			`{"apiVersion":"v1","data":{"LOG_LEVEL":"info","REPLICA_ID":"%d","application.yaml":%q},"kind":"ConfigMap","metadata":{"annotations":{},"name":%q,"namespace":%q}}`,
			i, conf.String(), cm.Name, cm.Namespace) + "\n",
	}
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{".":{},"f:LOG_LEVEL":{},"f:REPLICA_ID":{},"f:application.yaml":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{}}}}`),
	}}
	return cm
}

func uidFor(i int) types.UID { return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)) }
