// SPDX-License-Identifier: GPL-2.0
/*
 * The plugin changes nothing GCC generates, so an object built with it
 * must be byte for byte the object built without it. GCC writes its
 * options into the object (DW_AT_producer under -g, the default
 * -grecord-gcc-switches; the options section of -flto objects), and it
 * would write -fplugin=uniqd and -fplugin-arg-uniqd-* there. Marking the
 * plugin's own entries ignored, as GCC itself ignores -D, -I and
 * -fdebug-prefix-map there, keeps them out; and the -iplugindir= the
 * driver adds for any -fplugin, when no other plugin is left to need it.
 * Other plugins' options stay.
 */
#define INCLUDE_STRING
#include "gcc-plugin.h"
#include "toplev.h"
#include "opts.h"

#include "plugin.h"

/* Whether -fplugin=ARG names the plugin called BASE: "uniqd", or a path
 * whose file name is uniqd.so. */
static bool names_plugin(const char *arg, const char *base)
{
	const char *file = strrchr(arg, '/');
	size_t n = strlen(base);

	file = file ? file + 1 : arg;
	return !strncmp(file, base, n) && (!file[n] || !strcmp(file + n, ".so"));
}

void uq_unrecord_options(const char *base)
{
	size_t n = strlen(base);
	bool others = false;

	for (unsigned int i = 0; i < save_decoded_options_count; i++) {
		cl_decoded_option *o = &save_decoded_options[i];

		if (!o->arg)
			continue;
		if ((o->opt_index == OPT_fplugin_ && names_plugin(o->arg, base)) ||
		    (o->opt_index == OPT_fplugin_arg_ && !strncmp(o->arg, base, n) &&
		     o->arg[n] == '-'))
			o->opt_index = OPT_SPECIAL_ignore;
		else if (o->opt_index == OPT_fplugin_)
			others = true;
	}
	for (unsigned int i = 0; i < save_decoded_options_count && !others; i++)
		if (save_decoded_options[i].opt_index == OPT_iplugindir_)
			save_decoded_options[i].opt_index = OPT_SPECIAL_ignore;
}
