package cache

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// realisticPod returns a pod as a Deployment's ReplicaSet creates it and a kubelet reports it:
// three containers with env, ports, resources and probes, volumes, an owner reference,
// conditions and container statuses, and managedFields from the three managers that write a
// pod (the controller manager creates it, the scheduler binds it, the kubelet writes status).
func realisticPod(i int) *v1.Pod {
	name := fmt.Sprintf("web-7c9f8d6b5-%05d", i)
	uid := types.UID(fmt.Sprintf("3f2a9c1e-8b7d-4e6f-a5c4-%012d", i))
	owner := "5d1e7a2b-9c3f-4b8e-8d6a-0f1e2d3c4b5a"
	podIP := fmt.Sprintf("10.244.%d.%d", i/250%256, i%250+1)
	ts := metav1.Unix(1764000000, 0)
	var containers []v1.Container
	var statuses []v1.ContainerStatus
	var specFields []string
	for _, c := range []string{"app", "metrics-exporter", "log-shipper"} {
		containers = append(containers, v1.Container{
			Name:  c,
			Image: "registry.example.com/shop/" + c + ":v1.24.3",
			Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}},
			Env: []v1.EnvVar{
				{Name: "LOG_LEVEL", Value: "info"}, {Name: "REGION", Value: "eu-west-1"},
				{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			},
			Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("256Mi")},
			},
			ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
			VolumeMounts: []v1.VolumeMount{
				{Name: "config", MountPath: "/etc/" + c, ReadOnly: true},
				{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
			},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: v1.TerminationMessageReadFile,
			ImagePullPolicy:          v1.PullIfNotPresent,
		})
		started := true
		statuses = append(statuses, v1.ContainerStatus{
			Name: c, Ready: true, Started: &started, RestartCount: 0,
			Image:       "registry.example.com/shop/" + c + ":v1.24.3",
			ImageID:     "registry.example.com/shop/" + c + "@sha256:9b2c4e6a8d0f1b3c5e7a9c1e3f5a7b9d1f3e5c7a9b1d3f5e7c9a1b3d5f7e9c1a",
			ContainerID: "containerd://" + strings.Repeat("4f", 32),
			State:       v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: ts}},
		})
		specFields = append(specFields, fmt.Sprintf(`"k:{\"name\":\"%s\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"REGION\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},"f:timeoutSeconds":{}},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/%s\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}}`, c, c))
	}
	managed := []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1",
			FieldsV1: fieldsV1(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"` + owner + `\"}":{}}},"f:spec":{"f:containers":{` + strings.Join(specFields, ",") + `},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{},"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},"f:name":{}},"f:name":{}}}}}`)},
		{Manager: "kube-scheduler", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", Subresource: "binding",
			FieldsV1: fieldsV1(`{"f:spec":{"f:nodeName":{}}}`)},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", Subresource: "status",
			FieldsV1: fieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"` + podIP + `\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)},
	}
	var conditions []v1.PodCondition
	for _, c := range []v1.PodConditionType{"PodReadyToStartContainers", v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled} {
		conditions = append(conditions, v1.PodCondition{Type: c, Status: v1.ConditionTrue, LastTransitionTime: ts})
	}
	ctrl := true
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: "web-7c9f8d6b5-", Namespace: fmt.Sprintf("shop-%d", i%10), UID: uid,
			ResourceVersion: fmt.Sprint(100000 + i), CreationTimestamp: ts,
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7c9f8d6b5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7c9f8d6b5", UID: types.UID(owner), Controller: &ctrl, BlockOwnerDeletion: &ctrl}},
			ManagedFields:   managed,
		},
		Spec: v1.PodSpec{
			Containers: containers, NodeName: fmt.Sprintf("node-%03d", i%50), ServiceAccountName: "default",
			RestartPolicy: v1.RestartPolicyAlways, DNSPolicy: v1.DNSClusterFirst, SchedulerName: "default-scheduler",
			Volumes: []v1.Volume{{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "web-config"}}}}},
			Tolerations: []v1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
				{Key: "node.kubernetes.io/unreachable", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
			},
		},
		Status: v1.PodStatus{
			Phase: v1.PodRunning, Conditions: conditions, HostIP: "172.18.0.4", PodIP: podIP,
			PodIPs: []v1.PodIP{{IP: podIP}}, StartTime: &ts, QOSClass: v1.PodQOSBurstable,
			ContainerStatuses: statuses,
		},
	}
}

// BenchmarkCacheMemoryPerPod measures the heap an informer's cache keeps per realistic pod
// (realisticPod: 9.7 KB of JSON, 4.3 KB of it managedFields) in four shapes: the full pod as
// a typed informer caches it; the same with TransformStripManagedFields; the pod's metadata as
// a metadata-only informer (metav1.PartialObjectMetadata through the metadata client) caches
// it; and that with managedFields dropped. Each pod is decoded from its own JSON, as from the
// wire, then kept in an Indexer with the namespace index, as an informer does. The metric
// B/pod is the heap still in use after a GC, divided by the number of pods. MEMORY.md quotes
// the results.
func BenchmarkCacheMemoryPerPod(b *testing.B) {
	const pods = 2000
	wire := make([][]byte, pods)
	for i := range wire {
		var err error
		if wire[i], err = json.Marshal(realisticPod(i)); err != nil {
			b.Fatal(err)
		}
	}
	mf, _ := json.Marshal(realisticPod(0).ManagedFields)
	b.Logf("JSON per pod: %d bytes, of which managedFields %d", len(wire[0]), len(mf))
	cases := []struct {
		name      string
		decode    func([]byte) (interface{}, error)
		transform TransformFunc
		opts      []StoreOption
	}{
		{name: "full", decode: decodeAs[v1.Pod]},
		{name: "full-no-managedFields", decode: decodeAs[v1.Pod], transform: TransformStripManagedFields()},
		{name: "metadata-only", decode: decodeAs[metav1.PartialObjectMetadata]},
		{name: "metadata-only-no-managedFields", decode: decodeAs[metav1.PartialObjectMetadata], transform: TransformStripManagedFields()},
		// The compact stores keep no decoded objects here: the decoded-object cache adds at
		// most DecodedCacheSize decoded pods, whatever the number of pods.
		{name: "compact", decode: decodeAs[v1.Pod], opts: []StoreOption{WithCompactStorage(CompactOptions{DecodedCacheSize: -1})}},
		{name: "compact-compressed", decode: decodeAs[v1.Pod], opts: []StoreOption{WithCompactStorage(CompactOptions{Compress: true, DecodedCacheSize: -1})}},
		{name: "compact-no-managedFields", decode: decodeAs[v1.Pod], transform: TransformStripManagedFields(), opts: []StoreOption{WithCompactStorage(CompactOptions{DecodedCacheSize: -1})}},
		{name: "compact-compressed-no-managedFields", decode: decodeAs[v1.Pod], transform: TransformStripManagedFields(), opts: []StoreOption{WithCompactStorage(CompactOptions{Compress: true, DecodedCacheSize: -1})}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var perPod float64
			for b.Loop() {
				before := heapInUse()
				indexer := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, tc.opts...)
				for _, data := range wire {
					obj, err := tc.decode(data)
					if err != nil {
						b.Fatal(err)
					}
					if tc.transform != nil {
						if obj, err = tc.transform(obj); err != nil {
							b.Fatal(err)
						}
					}
					if err := indexer.Add(obj); err != nil {
						b.Fatal(err)
					}
				}
				perPod = float64(heapInUse()-before) / pods
				runtime.KeepAlive(indexer)
			}
			b.ReportMetric(perPod, "B/pod")
		})
	}
}

func decodeAs[T any](data []byte) (interface{}, error) {
	obj := new(T)
	err := json.Unmarshal(data, obj)
	return obj, err
}

// heapInUse returns the bytes of live heap objects after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// fieldsV1 returns the managed-fields set encoded as raw JSON. It goes through UnmarshalJSON
// because metav1.NewFieldsV1 is new in apimachinery v0.36 and FieldsV1's representation
// depends on the apimachinery version and build tags.
func fieldsV1(raw string) *metav1.FieldsV1 {
	f := &metav1.FieldsV1{}
	if err := f.UnmarshalJSON([]byte(raw)); err != nil {
		panic(err)
	}
	return f
}
