// SPDX-License-Identifier: GPL-2.0
/*
 * File names in keys: the same header must give the same text in every
 * unit of a build, however each unit's command line spelled its way there
 * (-I./include, -I../proj/include, an absolute -I).
 */
#include <climits>
#include <cstdlib>
#include <unistd.h>

#include "plugin.h"

/* Resolve "." and ".." by name in an absolute path. */
static std::string lexical(const std::string &abs)
{
	std::vector<std::string> parts;
	size_t i = 0;

	while (i < abs.size()) {
		size_t j = abs.find('/', i);

		if (j == std::string::npos)
			j = abs.size();
		std::string p = abs.substr(i, j - i);
		if (p == "..") {
			if (!parts.empty())
				parts.pop_back();
		} else if (!p.empty() && p != ".") {
			parts.push_back(p);
		}
		i = j + 1;
	}
	std::string out;
	for (const std::string &p : parts)
		out += "/" + p;
	return out.empty() ? "/" : out;
}

static const std::string &cwd()
{
	static std::string dir;

	if (dir.empty()) {
		char buf[PATH_MAX];

		/* getcwd() gives a path without symbolic links or dots. */
		dir = getcwd(buf, sizeof(buf)) ? buf : "/";
	}
	return dir;
}

std::string uq_normal_path(const char *file)
{
	if (!file || !*file)
		return "";
	std::string abs = lexical(file[0] == '/' ? std::string(file) : cwd() + "/" + file);
	const std::string &dir = cwd();

	if (dir == "/")
		return abs.substr(1);
	if (abs.size() > dir.size() && abs.compare(0, dir.size(), dir) == 0 &&
	    abs[dir.size()] == '/')
		return abs.substr(dir.size() + 1);
	return abs;
}
