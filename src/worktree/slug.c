/* Slugs of task descriptions, as the rp1 worktree tool makes them. */
#include "worktree/worktree.h"

#include <string.h>

/* Words that carry no meaning in a branch name. */
static const char *const stop_words[] = {
	"a", "an", "the", "in", "on", "at", "to", "of", "for", "and", "or", "with", "by",
	"from", "into", "onto", "is", "are", "be", "it", "its", "as", "that", "this", NULL
};

static int is_stop(const char *w, size_t n)
{
	const char *const *s;

	for (s = stop_words; *s; s++)
		if (strlen(*s) == n && !strncmp(*s, w, n))
			return 1;
	return 0;
}

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* Lower-case `text` into words of [a-z0-9-] separated by single spaces. */
static void words(const char *text, char *w, size_t n)
{
	size_t len = 0;
	char c;

	for (; *text && len + 1 < n; text++) {
		c = *text;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!word_char(c))
			c = ' ';
		if (c == ' ' && (len == 0 || w[len - 1] == ' '))
			continue;
		w[len++] = c;
	}
	w[len] = '\0';
}

/* Append one word to the slug, collapsing and trimming hyphens. */
static size_t append(char *out, size_t len, const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (w[i] == '-' && (len == 0 || out[len - 1] == '-'))
			continue;
		out[len++] = w[i];
	}
	if (len && out[len - 1] != '-')
		out[len++] = '-';
	return len;
}

/* Cut at WORKTREE_SLUG_MAX on a word boundary (a hyphen), trailing hyphens off. */
static size_t truncate_slug(char *s, size_t len)
{
	size_t cut;

	while (len && s[len - 1] == '-')
		len--;
	if (len > WORKTREE_SLUG_MAX) {
		cut = WORKTREE_SLUG_MAX;
		while (cut && s[cut] != '-')
			cut--;
		len = cut ? cut : WORKTREE_SLUG_MAX;
		while (len && s[len - 1] == '-')
			len--;
	}
	s[len] = '\0';
	return len;
}

static size_t build(const char *w, char *slug, int drop_stop)
{
	const char *p = w, *end;
	size_t len = 0, n;

	while (*p) {
		end = strchr(p, ' ');
		n = end ? (size_t)(end - p) : strlen(p);
		if (!(drop_stop && is_stop(p, n)) && len + n + 2 < 1024)
			len = append(slug, len, p, n);
		p += n;
		if (*p == ' ')
			p++;
	}
	return truncate_slug(slug, len);
}

size_t worktree_slug(const char *text, char *out, size_t n)
{
	char w[1024], slug[1024];
	size_t len;

	if (!n)
		return 0;
	words(text ? text : "", w, sizeof(w));
	if (!(len = build(w, slug, 1)))
		len = build(w, slug, 0);
	if (len >= n)
		len = n - 1;
	memcpy(out, slug, len);
	out[len] = '\0';
	return len;
}
