"""Task families for the forum site (WebArena's Reddit/Postmill tasks, template ids 200-299).

Kinds, as in WebArena: information retrieval answered with exit(message=...),
navigation (end on the right page), state changes (vote, subscribe, post,
comment, reply, edit), multi-requirement tasks, and infeasible ones whose right
answer is "N/A". Reference answers are computed from the seed database in
`build`; the oracles reach them through the same actions an agent has. Each
family holds out one slot (`held_out`): its values go to train or test, never both.
"""

from __future__ import annotations

from webrl.tasks.forum.base import ForumFamily
from webrl.tasks.forum.changes import (
    CommentOnPost,
    CreatePost,
    DownvotePost,
    EditMyPost,
    ReplyToComment,
    SubscribeForum,
    UnsubscribeForum,
    UpvotePost,
)
from webrl.tasks.forum.infeasible import (
    MissingForumSubscribers,
    MissingPostAuthor,
    MissingUserKarma,
)
from webrl.tasks.forum.info import (
    AuthorJoinDate,
    CommentCount,
    ForumSubscribers,
    NewestPostAuthor,
    PostAuthor,
    TopCommentAuthor,
    TopPostTitle,
    UserKarma,
)
from webrl.tasks.forum.multi import (
    PostAndComment,
    ReplyToTopComment,
    UpvoteNewestAndSubscribe,
    UpvoteNewestPosts,
)
from webrl.tasks.forum.navigation import AuthorProfileNav, ForumSortNav, OpenForum, UserCommentsNav

# Interleaved by kind: the fixed test split takes one task per family in this
# order, so any prefix of the tuple mixes info, nav, state, multi and infeasible.
FAMILIES: tuple[ForumFamily, ...] = (
    PostAuthor(), ForumSortNav(), UpvotePost(), UpvoteNewestAndSubscribe(), MissingForumSubscribers(),
    TopPostTitle(), AuthorProfileNav(), CreatePost(), PostAndComment(), CommentCount(),
    SubscribeForum(), MissingPostAuthor(), UserKarma(), UserCommentsNav(), ReplyToComment(),
    UpvoteNewestPosts(), TopCommentAuthor(), EditMyPost(), MissingUserKarma(),
    AuthorJoinDate(), ForumSubscribers(), NewestPostAuthor(), OpenForum(), DownvotePost(),
    UnsubscribeForum(), CommentOnPost(), ReplyToTopComment(),
)  # fmt: skip

__all__ = ["FAMILIES", "ForumFamily"]
