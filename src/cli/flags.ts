// The flags several commands share, declared once (SPEC §1: every command takes --project DIR and
// --json). A command adds them with `.addOption(...)`; `--json` says per command what it prints.
import { Option } from 'commander'

/** `--project DIR`: the project folder (default: the current folder). */
export const projectFlag = (): Option => new Option('--project <dir>', 'project folder (default: the current folder)')

/** `--json`: machine output; `prints` tells what is printed, e.g. "print the records as JSON". */
export const jsonFlag = (prints: string): Option => new Option('--json', prints)

/** `--users FILE`: the workspace users file. */
export const usersFlag = (): Option => new Option('--users <file>', 'users file (default .flowctl/users.yaml of the current folder)')
