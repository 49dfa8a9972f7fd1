import type { Resource } from '@agl/core/schema';
import type { ApiClient, ResourceVersion } from '../api/api-client';
import { Empty, ErrorBox, Link, Loading } from '../components/states';
import { formatPercent, formatReward, formatTime } from '../lib/format';
import { lineDiff } from '../lib/line-diff';
import { navigate, useLocation } from '../lib/router';
import { useAsync } from '../lib/use-async';
import { TableHead } from '../components/table-head';

/** The text a resource is compared by: the template, or the endpoint/model lines of an LLM. */
function resourceText(resource: Resource | undefined): string {
  if (!resource) return '';
  if (resource.resourceType === 'prompt_template') return resource.template;
  return [`endpoint: ${resource.endpoint}`, `model: ${resource.model}`, `api key: ${resource.apiKey ?? '(none)'}`].join(
    '\n',
  );
}

function ResourceBody({ name, resource }: { name: string; resource: Resource }) {
  return (
    <div className="resource" data-testid="resource">
      <h3>
        {name} <span className="badge">{resource.resourceType}</span>
      </h3>
      {resource.resourceType === 'prompt_template' ? (
        <pre className="template" data-testid="template-text">
          {resource.template}
        </pre>
      ) : (
        <dl className="facts">
          <dt>Endpoint</dt>
          <dd className="mono">{resource.endpoint}</dd>
          <dt>Model</dt>
          <dd className="mono">{resource.model}</dd>
          <dt>API key</dt>
          <dd className="mono" data-testid="api-key">
            {resource.apiKey ?? '(none)'}
          </dd>
        </dl>
      )}
    </div>
  );
}

function Diff({ from, to }: { from: ResourceVersion; to: ResourceVersion }) {
  const names = [...new Set([...Object.keys(from.resources), ...Object.keys(to.resources)])].sort();
  return (
    <div data-testid="diff">
      {names.map((name) => {
        const lines = lineDiff(resourceText(from.resources[name]), resourceText(to.resources[name]));
        const changed = lines.some((l) => l.kind !== 'same');
        return (
          <div key={name} className="diff-block">
            <h4>
              {name} {changed ? '' : <span className="muted">(unchanged)</span>}
            </h4>
            <pre className="diff">
              {lines.map((l, i) => (
                <div key={i} className={`diff-${l.kind}`} data-testid={`diff-${l.kind}`}>
                  {l.kind === 'add' ? '+ ' : l.kind === 'del' ? '- ' : '  '}
                  {l.text}
                </div>
              ))}
            </pre>
          </div>
        );
      })}
    </div>
  );
}

function rewardCell(v: ResourceVersion, mode: string) {
  const s = v.rewards[mode];
  return s ? `${formatReward(s.mean)} (${s.count})` : '—';
}

/** Every resources version, its resources (keys masked), rewards earned, and a diff against another version. */
export function ResourcesPage({ client, pollMs = 5000 }: { client: ApiClient; pollMs?: number }) {
  const location = useLocation();
  const state = useAsync(() => client.resources(), 'resources', pollMs);
  if (state.error && !state.data) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (!state.data) return <Loading what="resources" />;
  const versions = state.data;
  if (versions.length === 0)
    return <Empty title="No resources yet.">An algorithm publishes prompt templates or LLM endpoints here.</Empty>;
  const selectedId = location.query.get('id');
  const selected = versions.find((v) => v.resourcesId === selectedId) ?? versions[versions.length - 1]!;
  const index = versions.indexOf(selected);
  const compareId = location.query.get('compare');
  const compare = versions.find((v) => v.resourcesId === compareId) ?? (index > 0 ? versions[index - 1]! : null);
  const go = (id: string, cmp: string | null) =>
    navigate(`/resources?id=${encodeURIComponent(id)}${cmp ? `&compare=${encodeURIComponent(cmp)}` : ''}`, {
      replace: true,
    });
  return (
    <section>
      <h1>Resources</h1>
      <div className="split">
        <table className="data versions" data-testid="versions-table">
          <TableHead columns={['#', 'Resources id', 'v', 'Created', 'Train reward', 'Val reward', 'Val success']} />
          <tbody>
            {versions.map((v, i) => (
              <tr
                key={v.resourcesId}
                className={v === selected ? 'selected clickable' : 'clickable'}
                data-testid="version-row"
                onClick={() => go(v.resourcesId, null)}
              >
                <td>{i + 1}</td>
                <td className="mono">
                  {v.resourcesId} {v.isLatest ? <span className="badge status-succeeded">latest</span> : null}
                </td>
                <td>{v.version}</td>
                <td>{formatTime(v.createTime)}</td>
                <td className="num">{rewardCell(v, 'train')}</td>
                <td className="num">{rewardCell(v, 'val')}</td>
                <td className="num">{formatPercent(v.rewards.val?.success_rate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div className="version-detail" data-testid="version-detail">
          <h2>
            <span className="mono" data-testid="selected-version">
              {selected.resourcesId}
            </span>{' '}
            <span className="muted">v{selected.version}</span>
          </h2>
          <p>
            <Link to={`/rollouts?resources=${encodeURIComponent(selected.resourcesId)}`}>rollouts of this version</Link>
          </p>
          {Object.entries(selected.resources).map(([name, resource]) => (
            <ResourceBody key={name} name={name} resource={resource} />
          ))}
          <h2>
            Diff against{' '}
            <select
              aria-label="Compare with"
              value={compare?.resourcesId ?? ''}
              onChange={(e) => go(selected.resourcesId, e.target.value || null)}
            >
              <option value="">(choose a version)</option>
              {versions
                .filter((v) => v !== selected)
                .map((v) => (
                  <option key={v.resourcesId} value={v.resourcesId}>
                    #{versions.indexOf(v) + 1} {v.resourcesId}
                  </option>
                ))}
            </select>
          </h2>
          {compare ? <Diff from={compare} to={selected} /> : <p className="muted">This is the first version.</p>}
        </div>
      </div>
    </section>
  );
}
