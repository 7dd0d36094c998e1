package debugpage

import (
	"html/template"
	"strconv"
	"time"
)

var funcs = template.FuncMap{
	"secs": formatSeconds,
	"optSecs": func(s *float64) string {
		if s == nil {
			return "—"
		}
		return formatSeconds(*s)
	},
	"when": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.Format("15:04:05")
	},
	"rate": func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"keysURL": func(name string) template.URL {
		return template.URL("keys?" + urlValues("informer", name))
	},
	"objectURL": func(informer, key string) template.URL {
		return template.URL("object?" + urlValues("informer", informer, "key", key))
	},
	"add": func(a, b int) int { return a + b },
}

// formatSeconds writes a duration in seconds for people: "0", "350ms", "12.4s", "3m20s".
func formatSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 0, 64) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 0, 64) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(s, 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

const style = `<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.15em;margin:1.6em 0 .4em}
table{border-collapse:collapse;margin-bottom:1em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f2f2f2;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.synced{color:#176f2c;font-weight:600}.not-synced{color:#a4161a;font-weight:600}
.reason{font-weight:normal;color:#222;max-width:40em}
.muted{color:#777}code,pre{font:13px ui-monospace,monospace}
pre{background:#f6f6f6;padding:1em;overflow:auto}
</style>`

var overviewTemplate = template.Must(template.New("overview").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kcache</title>` + style + `</head><body>
<h1>kcache</h1>
<p class="muted">Generated at {{.GeneratedAt.Format "2006-01-02 15:04:05 MST"}} · <a href="?format=json">JSON</a> · reload for fresh values</p>

<h2 id="informers">Informers ({{len .Informers}})</h2>
{{if .Informers}}<table>
<tr><th>Informer</th><th>Type</th><th>State</th><th>Objects</th><th>resourceVersion seen / processed</th><th>Started</th><th>Synced after</th>
<th>Lists</th><th>Relists: expired / watch-list fallback / error</th><th>Watch restarts</th><th>Last watch error</th><th>Events in</th><th>Events/s</th><th>Keys</th></tr>
{{range .Informers}}<tr class="informer" id="informer-{{.Name}}">
<td><code>{{.Name}}</code>{{if .DefaultName}} <span class="muted">(default name)</span>{{end}}</td><td>{{.Type}}{{if .Resource}}<br><span class="muted">{{.Resource}}</span>{{end}}</td>
{{if .Synced}}<td class="state synced">synced</td>{{else}}<td class="state not-synced">not synced<div class="reason">{{.NotSyncedReason}}</div></td>{{end}}
<td class="n">{{.Objects}}</td><td><code>{{.LastResourceVersionSeen}}</code> / <code>{{.LastResourceVersionProcessed}}</code></td><td>{{when .StartedAt}}</td>
<td class="n">{{if .Synced}}{{secs .StartupLatencySeconds}}{{else}}—{{end}}</td>
<td class="n">{{.Lists}}</td><td class="n">{{.Relists.Expired}} / {{.Relists.WatchListFallback}} / {{.Relists.Error}}</td>
<td class="n">{{.WatchRestarts}}</td><td>{{if .LastWatchError}}{{.LastWatchError}}<br><span class="muted">at {{when .LastWatchErrorAt}}</span>{{else}}—{{end}}</td>
<td class="n">{{.EventsIn}}</td><td class="n">{{rate .EventsPerSecond}}</td>
<td><a href="{{keysURL .Name}}">keys</a></td></tr>
{{end}}</table>{{else}}<p class="muted">No running informer.</p>{{end}}

<h2 id="handlers">Event handlers</h2>
{{$any := false}}{{range .Informers}}{{if .Handlers}}{{$any = true}}{{end}}{{end}}
{{if $any}}<table>
<tr><th>Informer</th><th>Handler</th><th>Synced</th><th>Pending</th><th>Lag (oldest pending)</th><th>Processed</th><th>Coalesced</th><th>Coalescing episodes</th><th>Panics</th><th>Calls timed</th><th>Mean call</th></tr>
{{range $i := .Informers}}{{range .Handlers}}<tr class="handler">
<td><code>{{$i.Name}}</code></td><td><code>{{.Name}}</code></td>
{{if .Synced}}<td class="synced">synced</td>{{else}}<td class="not-synced">not synced</td>{{end}}
<td class="n">{{.Pending}}</td><td class="n">{{secs .LagSeconds}}</td><td class="n">{{.Processed}}</td><td class="n">{{.Coalesced}}</td>
<td class="n">{{.CoalescingEpisodes}}</td><td class="n">{{.Panics}}</td><td class="n">{{.Calls}}</td><td class="n">{{if .Calls}}{{secs .MeanCallSeconds}}{{else}}—{{end}}</td></tr>
{{end}}{{end}}</table>{{else}}<p class="muted">No event handler.</p>{{end}}

<h2 id="queues">Workqueues ({{len .Queues}})</h2>
{{if .Queues}}<table>
<tr><th>Queue</th><th>Depth</th><th>Adds</th><th>Processing</th><th>Retries</th><th>Delayed</th><th>Oldest waiting</th><th>Longest running</th><th>Unfinished work</th></tr>
{{range .Queues}}<tr class="queue">
<td><code>{{.Name}}</code>{{if .DefaultName}} <span class="muted">(default name)</span>{{end}}</td>
<td class="n">{{.Depth}}</td><td class="n">{{.Adds}}</td><td class="n">{{.Processing}}</td><td class="n">{{.Retries}}</td><td class="n">{{.Delayed}}</td>
<td class="n">{{optSecs .OldestWaitingSeconds}}</td><td class="n">{{optSecs .LongestRunningSeconds}}</td><td class="n">{{optSecs .UnfinishedWorkSeconds}}</td></tr>
{{end}}</table>
<p class="muted">Times are kept for queues created after the page, or with a metrics provider; — for the others.</p>{{else}}<p class="muted">No live workqueue.</p>{{end}}
<p class="muted">Object contents are {{if .ShowObjects}}shown through the page's ShowObject option{{else}}never shown: only keys and resourceVersions{{end}}.</p>
</body></html>
`))

var keysTemplate = template.Must(template.New("keys").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kcache: keys of {{.Informer}}</title>` + style + `</head><body>
<h1>Keys of <code>{{.Informer}}</code></h1>
<p><a href="./">overview</a> · {{.Total}} objects{{if .Keys}}; keys {{.From}}–{{add .From (len .Keys) | add -1}} shown{{end}} ·
<a href="{{.Start}}">first page</a>{{if .NextURL}} · <a href="{{.NextURL}}" rel="next">next {{.Limit}}</a>{{end}}</p>
{{if .Keys}}<table>
<tr><th>Key</th><th>resourceVersion</th></tr>
{{$o := .}}{{range .Keys}}<tr class="key"><td><code>{{if $o.Objects}}<a href="{{objectURL $o.Informer .Key}}">{{.Key}}</a>{{else}}{{.Key}}{{end}}</code></td><td><code>{{.ResourceVersion}}</code></td></tr>
{{end}}</table>{{else}}<p class="muted">No keys on this page.</p>{{end}}
{{if .NextURL}}<p><a href="{{.NextURL}}">next {{.Limit}}</a></p>{{end}}
</body></html>
`))

var objectTemplate = template.Must(template.New("object").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kcache: {{.Key}}</title>` + style + `</head><body>
<h1><code>{{.Key}}</code> in <code>{{.Informer}}</code></h1>
<p><a href="./">overview</a> · <a href="{{keysURL .Informer}}">keys</a></p>
<pre>{{.Contents}}</pre>
</body></html>
`))
