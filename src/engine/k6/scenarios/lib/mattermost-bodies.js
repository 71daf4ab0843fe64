// @ts-check
/*
 * The request bodies of the Mattermost scenario (../mattermost.js), typed with
 * @mattermost/types (v11.9.0, the types of Mattermost's own web app and Client4) so that
 * `npm run typecheck` refuses a misspelt or unknown field: tsconfig.json has allowJs, and
 * this file opts in to checking with the line above. The types are imported in JSDoc only,
 * so k6 runs this file as plain JavaScript. Where @mattermost/types has no type for a body
 * (login, search terms, a reminder), the fields are written out and the request check
 * against Mattermost's API description (test/chat-servers/mattermost/openapi.ts) is their source.
 */

/** @typedef {import('@mattermost/types/posts').Post} Post */
/** @typedef {import('@mattermost/types/posts').PostPriorityMetadata} PostPriorityMetadata */
/** @typedef {import('@mattermost/types/reactions').Reaction} Reaction */
/** @typedef {import('@mattermost/types/channels').Channel} Channel */
/** @typedef {import('@mattermost/types/channels').ChannelMembership} ChannelMembership */
/** @typedef {import('@mattermost/types/channel_categories').ChannelCategory} ChannelCategory */
/** @typedef {import('@mattermost/types/search').SearchParameter} SearchParameter */
/** @typedef {import('@mattermost/types/users').UserProfile} UserProfile */
/** @typedef {import('@mattermost/types/users').UserCustomStatus} UserCustomStatus */

/**
 * POST /users/login (Client4.login sends login_id and password).
 * @param {string} loginId
 * @param {string} password
 * @returns {{ login_id: string } & Pick<UserProfile, 'password'>}
 */
export function loginBody(loginId, password) {
  return { login_id: loginId, password };
}

/**
 * POST /channels/members/me/view.
 * @param {string} channelId
 * @param {string} prevChannelId
 * @returns {Pick<ChannelMembership, 'channel_id'> & { prev_channel_id: ChannelMembership['channel_id'] }}
 */
export function viewChannelBody(channelId, prevChannelId) {
  return { channel_id: channelId, prev_channel_id: prevChannelId };
}

/**
 * The priority of a persistent-notification post (Professional licence or higher).
 * @returns {PostPriorityMetadata}
 */
export function persistentPriority() {
  // PostPriority is a declared enum of @mattermost/types: its value, not an import, at run time.
  return { priority: /** @type {import('@mattermost/types/posts').PostPriority} */ ('urgent'), persistent_notifications: true };
}

/**
 * POST /posts: a root post, or a reply when `rootId` is set; `priority` only on root posts
 * (Mattermost refuses it on a reply with 400).
 * @param {string} channelId
 * @param {string} message
 * @param {string} rootId '' for a root post
 * @param {PostPriorityMetadata | undefined} priority
 * @returns {Pick<Post, 'channel_id' | 'message'> & Partial<Pick<Post, 'root_id'>> & { metadata?: { priority: PostPriorityMetadata } }}
 */
export function postBody(channelId, message, rootId, priority) {
  /** @type {ReturnType<typeof postBody>} */
  const body = { channel_id: channelId, message };
  if (priority) body.metadata = { priority };
  else if (rootId) body.root_id = rootId;
  return body;
}

/**
 * PUT /posts/{post_id}/patch.
 * @param {string} message
 * @returns {Pick<Post, 'message'>}
 */
export function patchPostBody(message) {
  return { message };
}

/**
 * POST /reactions.
 * @param {string} userId
 * @param {string} postId
 * @param {string} emojiName
 * @returns {Pick<Reaction, 'user_id' | 'post_id' | 'emoji_name'>}
 */
export function reactionBody(userId, postId, emojiName) {
  return { user_id: userId, post_id: postId, emoji_name: emojiName };
}

/**
 * POST /users/search (Client4.searchUsers takes `any` options).
 * @param {string} term
 * @param {string} teamId
 * @returns {{ term: string, team_id: string, allow_inactive: boolean, limit: number }}
 */
export function searchUsersBody(term, teamId) {
  return { term, team_id: teamId, allow_inactive: false, limit: 100 };
}

/**
 * POST /teams/{team_id}/posts/search.
 * @param {string} terms
 * @returns {Omit<SearchParameter, 'time_zone_offset'>}
 */
export function searchPostsBody(terms) {
  return { terms, is_or_search: false, include_deleted_channels: false, page: 0, per_page: 20 };
}

/**
 * POST /channels/group/search and POST /teams/{team_id}/channels/search.
 * @param {string} term
 * @returns {{ term: string }}
 */
export function searchChannelsBody(term) {
  return { term };
}

/**
 * POST /channels.
 * @param {string} teamId
 * @param {string} name also the display name
 * @param {'O' | 'P'} type
 * @returns {Pick<Channel, 'team_id' | 'name' | 'display_name' | 'type'>}
 */
export function createChannelBody(teamId, name, type) {
  return { team_id: teamId, name, display_name: name, type };
}

/**
 * POST /channels/{channel_id}/members.
 * @param {string} userId
 * @returns {Pick<ChannelMembership, 'user_id'>}
 */
export function addChannelMemberBody(userId) {
  return { user_id: userId };
}

/**
 * POST /users/{user_id}/teams/{team_id}/channels/categories.
 * @param {string} userId
 * @param {string} teamId
 * @param {string} displayName
 * @returns {Pick<ChannelCategory, 'user_id' | 'team_id' | 'display_name' | 'type'>}
 */
export function createCategoryBody(userId, teamId, displayName) {
  return { user_id: userId, team_id: teamId, display_name: displayName, type: 'custom' };
}

/**
 * PUT /users/{user_id}/teams/{team_id}/channels/categories/{category_id}: the category as the
 * server returned it, collapsed or expanded (Client4.updateChannelCategory sends a whole ChannelCategory).
 * @param {ChannelCategory} category
 * @returns {ChannelCategory}
 */
export function toggledCategoryBody(category) {
  return Object.assign({}, category, { collapsed: !category.collapsed });
}

/**
 * PUT /users/me/status/custom.
 * @param {string} emoji
 * @param {string} text
 * @returns {Pick<UserCustomStatus, 'emoji' | 'text'>}
 */
export function customStatusBody(emoji, text) {
  return { emoji, text };
}

/**
 * POST /users/{user_id}/posts/{post_id}/reminder.
 * @param {number} targetTimeSec Unix seconds
 * @returns {{ target_time: number }}
 */
export function postReminderBody(targetTimeSec) {
  return { target_time: targetTimeSec };
}
