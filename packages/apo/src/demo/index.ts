/**
 * `@agl/apo/demo`: the meeting-room task of `examples/apo-room-selector` (tasks, grader and a traced agent), for
 * trying APO end to end and for tests. `@agl/testing`'s `roomSelectorRuleLlm` is an offline stand-in for its models.
 */
export {
  describeRequest,
  gradeReply,
  roomAgent,
  roomTasks,
  ROOM_APO_SEARCH,
  ROOM_SEED_PROMPT,
  type Room,
  type RoomTask,
} from './room-task';
