package debugpage

import (
	"time"

	"github.com/kcache/cache/workqueue"
)

// overview is the index page, as HTML and as JSON: one model for both, so they cannot differ.
type overview struct {
	GeneratedAt time.Time      `json:"generatedAt"`
	Informers   []informerView `json:"informers"`
	Queues      []queueView    `json:"queues"`
}

// informerView is one informer. Durations are in seconds; times are RFC 3339, absent when
// zero.
type informerView struct {
	Name                         string        `json:"name"`
	DefaultName                  bool          `json:"defaultName"`
	Resource                     string        `json:"resource,omitempty"`
	Type                         string        `json:"type,omitempty"`
	Synced                       bool          `json:"synced"`
	State                        string        `json:"state"`
	NotSyncedReason              string        `json:"notSyncedReason,omitempty"`
	StartedAt                    *time.Time    `json:"startedAt,omitempty"`
	SyncedAt                     *time.Time    `json:"syncedAt,omitempty"`
	StartupLatencySeconds        float64       `json:"startupLatencySeconds"`
	Objects                      int           `json:"objects"`
	LastResourceVersionSeen      string        `json:"lastResourceVersionSeen"`
	LastResourceVersionProcessed string        `json:"lastResourceVersionProcessed"`
	Lists                        uint64        `json:"lists"`
	Relists                      relistsView   `json:"relists"`
	WatchRestarts                uint64        `json:"watchRestarts"`
	LastWatchError               string        `json:"lastWatchError,omitempty"`
	LastWatchErrorAt             *time.Time    `json:"lastWatchErrorAt,omitempty"`
	EventsIn                     uint64        `json:"eventsIn"`
	EventsPerSecond              float64       `json:"eventsPerSecond"`
	Handlers                     []handlerView `json:"handlers"`
}

// relistsView counts the listings after the first, by cause.
type relistsView struct {
	Expired           uint64 `json:"expired"`
	WatchListFallback uint64 `json:"watchListFallback"`
	Error             uint64 `json:"error"`
}

// handlerView is one event handler of an informer.
type handlerView struct {
	Name               string  `json:"name"`
	Synced             bool    `json:"synced"`
	Pending            int     `json:"pending"`
	LagSeconds         float64 `json:"lagSeconds"`
	Processed          uint64  `json:"processed"`
	Coalesced          uint64  `json:"coalesced"`
	CoalescingEpisodes uint64  `json:"coalescingEpisodes"`
	Panics             uint64  `json:"panics"`
	Calls              uint64  `json:"calls"`
	MeanCallSeconds    float64 `json:"meanCallSeconds"`
}

// queueView is one workqueue. The durations are present only for a measured queue.
type queueView struct {
	Name                  string   `json:"name"`
	DefaultName           bool     `json:"defaultName"`
	Depth                 int      `json:"depth"`
	Adds                  int64    `json:"adds"`
	Processing            int      `json:"processing"`
	Retries               int64    `json:"retries"`
	Delayed               int      `json:"delayed"`
	OldestWaitingSeconds  *float64 `json:"oldestWaitingSeconds,omitempty"`
	LongestRunningSeconds *float64 `json:"longestRunningSeconds,omitempty"`
	UnfinishedWorkSeconds *float64 `json:"unfinishedWorkSeconds,omitempty"`
}

func newOverview(now time.Time, informers []informerStatus, queues []workqueue.QueueStatus) overview {
	o := overview{GeneratedAt: now, Informers: []informerView{}, Queues: []queueView{}}
	for _, s := range informers {
		o.Informers = append(o.Informers, newInformerView(s))
	}
	for _, q := range queues {
		o.Queues = append(o.Queues, newQueueView(q))
	}
	return o
}

func newInformerView(s informerStatus) informerView {
	v := informerView{
		Name:                         s.Name,
		DefaultName:                  s.DefaultName,
		Type:                         s.Type,
		Synced:                       s.Synced,
		State:                        "not synced",
		NotSyncedReason:              s.NotSyncedReason,
		StartedAt:                    timePtr(s.StartedAt),
		SyncedAt:                     timePtr(s.SyncedAt),
		StartupLatencySeconds:        s.StartupLatency.Seconds(),
		Objects:                      s.Objects,
		LastResourceVersionSeen:      s.LastResourceVersionSeen,
		LastResourceVersionProcessed: s.LastResourceVersionProcessed,
		Lists:                        s.Lists,
		Relists: relistsView{
			Expired:           s.Relists.Expired,
			WatchListFallback: s.Relists.WatchListFallback,
			Error:             s.Relists.Error,
		},
		WatchRestarts:    s.WatchRestarts,
		LastWatchError:   s.LastWatchError,
		LastWatchErrorAt: timePtr(s.LastWatchErrorAt),
		EventsIn:         s.EventsIn,
		EventsPerSecond:  s.EventsPerSecond,
		Handlers:         []handlerView{},
	}
	if !s.Resource.Empty() {
		v.Resource = s.Resource.String()
	}
	if s.Synced {
		v.State = "synced"
	}
	for _, h := range s.Handlers {
		hv := handlerView{
			Name:               h.Name,
			Synced:             h.Synced,
			Pending:            h.Pending,
			LagSeconds:         h.Lag.Seconds(),
			Processed:          h.Processed,
			Coalesced:          h.Coalesced,
			CoalescingEpisodes: h.CoalescingEpisodes,
			Panics:             h.Panics,
			Calls:              h.HandlerTime.Count,
		}
		if h.HandlerTime.Count > 0 {
			hv.MeanCallSeconds = h.HandlerTime.Sum.Seconds() / float64(h.HandlerTime.Count)
		}
		v.Handlers = append(v.Handlers, hv)
	}
	return v
}

func newQueueView(q workqueue.QueueStatus) queueView {
	v := queueView{
		Name:        q.Name,
		DefaultName: !q.Named,
		Depth:       q.Depth,
		Adds:        q.Adds,
		Processing:  q.Processing,
		Retries:     q.Retries,
		Delayed:     q.Delayed,
	}
	if q.Timed {
		v.OldestWaitingSeconds = secondsPtr(q.OldestWaiting)
		v.LongestRunningSeconds = secondsPtr(q.LongestRunning)
		v.UnfinishedWorkSeconds = secondsPtr(q.UnfinishedWork)
	}
	return v
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func secondsPtr(d time.Duration) *float64 {
	s := d.Seconds()
	return &s
}
