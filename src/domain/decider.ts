// A decider is plain data and functions: decide what happens, evolve the state by what happened.
export interface Decider<State, Command, Event> {
  initialState(): State;
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
}

export function fold<State, Event>(decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>, events: Iterable<Event>): State {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}
