// Starts the editor: the page names the project and flow (data attributes); the flow file and the
// node kinds come from the server's JSON APIs.
import { createRoot } from 'react-dom/client'
import { loadFlow, loadKinds, type FlowFile } from './api.js'
import { App } from './app.js'

const NEW_FLOW = `name: New Flow
description: What this flow does.
nodes:
  - id: start
    type: start
    name: Start
    method: post
    next: done
  - id: done
    type: end
    name: Done
    status: 200
    body: { ok: true }
`

async function start(): Promise<void> {
  // Marks for bench/editor-load.js: the bundle ran; the data arrived (the App marks its first paint).
  performance.mark('editor-start')
  const root = document.getElementById('editor')!
  const projectId = document.body.dataset.project ?? ''
  const slug = document.body.dataset.slug || null
  try {
    const [{ kinds, defs }, file] = await Promise.all([
      loadKinds(),
      slug ? loadFlow(projectId, slug) : Promise.resolve<FlowFile>({ version: '', text: NEW_FLOW, problems: [] }),
    ])
    performance.mark('editor-data')
    createRoot(root).render(<App projectId={projectId} slug={slug} kinds={kinds} defs={defs} file={file} />)
  } catch (error) {
    root.textContent = `The editor could not load: ${(error as Error).message}`
    root.className = 'load-error'
  }
}

void start()
