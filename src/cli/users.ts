import type { Command } from 'commander'
import { FlowctlError } from '../errors.js'
import { collect, type CommandContext } from './context.js'
import { jsonFlag, usersFlag } from './flags.js'

const ROLES = ['viewer', 'editor', 'owner'] as const
type Role = (typeof ROLES)[number]

/** Parses `PROJECT_ID=ROLE`. */
function parseGrant(text: string): [string, Role] {
  const [projectId, role] = text.split('=')
  if (!projectId || !role || !(ROLES as readonly string[]).includes(role)) {
    throw new FlowctlError('USAGE', `a grant is PROJECT_ID=viewer|editor|owner, got "${text}"`)
  }
  return [projectId, role as Role]
}

export function defineUsersCommand(program: Command, context: CommandContext): void {
  const users = program
    .command('users')
    .description('add, list, grant and remove the users who may read OpenAPI documents and run history')
    .addOption(usersFlag())
    .addHelpText('after', '\nserve reads the .flowctl/users.yaml of the folder it starts in and of each project it serves (or only --users FILE).')
  const scope: UsersScope = { users, context }
  defineAdd(scope)
  defineGrant(scope)
  defineList(scope)
  defineRotate(scope)
  defineRemove(scope)
}

/** What every `users` subcommand shares: the parent command (its `--users`) and the context. */
interface UsersScope {
  users: Command
  context: CommandContext
}

/** The users file: the subcommand's `--users`, else the parent's, else `.flowctl/users.yaml` here. */
async function usersFile(scope: UsersScope, local?: string): Promise<string> {
  const { resolve } = await import('node:path')
  const { defaultUsersFile } = await import('../users/users-file.js')
  const option = local ?? (scope.users.opts() as { users?: string }).users
  return option ? resolve(scope.context.cwd, option) : defaultUsersFile(scope.context.cwd)
}

/**
 * A grant for a project this folder does not hold is most likely a typo: warn, naming the project
 * that is here (the grant is still written: the users file may serve projects elsewhere).
 */
async function warnUnknownProjects(context: CommandContext, projectIds: string[]): Promise<void> {
  const { readProjectId } = await import('../project/settings.js')
  const here = await readProjectId(context.cwd)
  for (const projectId of projectIds) {
    if (projectId === here) continue
    const where = here ? `the project in this folder is "${here}"` : `there is no flowctl project in ${context.cwd}`
    context.output.error(context.output.color.yellow(`warning: granted a role on project "${projectId}", but ${where}; check the spelling`))
  }
}

function defineAdd(scope: UsersScope): void {
  const { context } = scope
  scope.users
    .command('add')
    .description('add a user and print their token (shown once)')
    .argument('<name>', 'user name')
    .option('--grant <projectId=role>', 'grant a role on a project (repeatable)', collect)
    .addOption(usersFlag())
    .addOption(jsonFlag('print { name, token }'))
    .action(async (name: string, flags: { grant?: string[]; users?: string }) => {
      const { addUser } = await import('../users/users-file.js')
      const grants = Object.fromEntries((flags.grant ?? []).map(parseGrant))
      const file = await usersFile(scope, flags.users)
      const created = await addUser(file, name, grants)
      await warnUnknownProjects(context, Object.keys(grants))
      const { output } = context
      if (output.json) output.data({ name: created.name, token: created.token })
      else {
        output.line(`added user ${created.name} to ${file}`)
        output.line(`token: ${created.token}`)
        output.line(output.color.dim('Store it now: it is shown only once, and only its hash is kept.'))
      }
    })
}

function defineGrant(scope: UsersScope): void {
  const { context } = scope
  scope.users
    .command('grant')
    .description('give a user a role on a project')
    .argument('<name>', 'user name')
    .argument('<grant>', 'PROJECT_ID=viewer|editor|owner')
    .addOption(usersFlag())
    .addOption(jsonFlag('print { ok }'))
    .action(async (name: string, grant: string, flags: { users?: string }) => {
      const { grantUser } = await import('../users/users-file.js')
      const [projectId, role] = parseGrant(grant)
      await grantUser(await usersFile(scope, flags.users), name, projectId, role)
      await warnUnknownProjects(context, [projectId])
      if (context.output.json) context.output.data({ ok: true, name, projectId, role })
      else context.output.line(`${name} is now ${role} of ${projectId}`)
    })
}

function defineList(scope: UsersScope): void {
  const { context } = scope
  scope.users
    .command('list')
    .description('list users and their grants (never tokens)')
    .addOption(usersFlag())
    .addOption(jsonFlag('print the users as JSON'))
    .action(async (flags: { users?: string }) => {
      const { readUsers } = await import('../users/users-file.js')
      const list = (await readUsers(await usersFile(scope, flags.users))).map((u) => ({ name: u.name, grants: u.grants, createdAt: u.createdAt }))
      const { output } = context
      if (output.json) output.data(list)
      else if (list.length === 0) output.line('no users')
      else {
        for (const user of list) {
          const grants =
            Object.entries(user.grants)
              .map(([p, r]) => `${p}=${r}`)
              .join(', ') || '(no access)'
          output.line(`${user.name.padEnd(20)} ${grants}`)
        }
      }
    })
}

function defineRotate(scope: UsersScope): void {
  const { context } = scope
  scope.users
    .command('rotate')
    .description('give a user a new token (printed once); the old token stops working at once')
    .argument('<name>', 'user name')
    .addOption(usersFlag())
    .addOption(jsonFlag('print { name, token }'))
    .action(async (name: string, flags: { users?: string }) => {
      const { rotateToken } = await import('../users/users-file.js')
      const rotated = await rotateToken(await usersFile(scope, flags.users), name)
      const { output } = context
      if (output.json) output.data(rotated)
      else {
        output.line(`new token for ${rotated.name}: ${rotated.token}`)
        output.line(output.color.dim('The old token no longer works. Store this one now: it is shown only once.'))
      }
    })
}

function defineRemove(scope: UsersScope): void {
  const { context } = scope
  scope.users
    .command('remove')
    .description('remove a user')
    .argument('<name>', 'user name')
    .addOption(usersFlag())
    .addOption(jsonFlag('print { ok }'))
    .action(async (name: string, flags: { users?: string }) => {
      const { removeUser } = await import('../users/users-file.js')
      await removeUser(await usersFile(scope, flags.users), name)
      if (context.output.json) context.output.data({ ok: true, name })
      else context.output.line(`removed user ${name}`)
    })
}
