"""Task families for the code site (WebArena's GitLab tasks, template ids 400-499).

Kinds, as in WebArena: information retrieval answered with exit(message=...)
(`info`), navigation judged by the final URL (`navigation`), state changes
judged by pages fetched after the episode (`changes`: issues, comments,
members, stars, settings, forks), multi-requirement tasks (`multi`), and
infeasible ones whose right answer is "N/A" (`infeasible`). Reference answers
are computed from the seed database in `build`; the oracles reach them through
the same actions an agent has. Each family holds out one slot (`held_out`):
its values go to train or test, never both.
"""

from __future__ import annotations

from webrl.tasks.code.base import CodeFamily
from webrl.tasks.code.changes import (
    AssignIssue,
    CloseIssue,
    CommentOnIssue,
    CommentOnMergeRequest,
    CreateIssue,
    ReopenIssue,
)
from webrl.tasks.code.infeasible import (
    MissingCommit,
    MissingIssueAssignee,
    MissingProjectStars,
    MissingUserRole,
    PipelineStatus,
)
from webrl.tasks.code.info import (
    CommitMessageOnDate,
    IssueAssignee,
    LatestCommitAuthor,
    MemberRole,
    MergeRequestSourceBranch,
    OpenIssuesWithLabel,
    ProjectStars,
    TopContributor,
)
from webrl.tasks.code.multi import (
    AddTwoMembers,
    CloseLabelledIssues,
    ForkAndDescribe,
    IssueForTopContributor,
)
from webrl.tasks.code.navigation import (
    AssignedIssuesNav,
    ClosedIssuesNav,
    CommitsNav,
    FileNav,
    LabelledIssuesNav,
    ProfileNav,
)
from webrl.tasks.code.project_changes import (
    AddMember,
    ChangeDescription,
    ChangeMemberRole,
    ForkProject,
    StarProject,
)

# Interleaved by kind: the fixed test split takes one task per family in this
# order, so any prefix of the tuple mixes info, nav, state, multi and infeasible.
FAMILIES: tuple[CodeFamily, ...] = (
    OpenIssuesWithLabel(), ClosedIssuesNav(), CreateIssue(), CloseLabelledIssues(), MissingProjectStars(),
    LatestCommitAuthor(), ProfileNav(), CloseIssue(), IssueForTopContributor(), MissingIssueAssignee(),
    IssueAssignee(), LabelledIssuesNav(), AddMember(), AddTwoMembers(), PipelineStatus(),
    ProjectStars(), CommitsNav(), StarProject(), ForkAndDescribe(), MissingCommit(),
    MemberRole(), AssignedIssuesNav(), CommentOnIssue(), ChangeDescription(), MissingUserRole(),
    CommitMessageOnDate(), FileNav(), AssignIssue(), ChangeMemberRole(),
    MergeRequestSourceBranch(), ReopenIssue(), ForkProject(),
    TopContributor(), CommentOnMergeRequest(),
)  # fmt: skip

__all__ = ["FAMILIES", "CodeFamily"]
