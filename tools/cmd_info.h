#pragma once
int cmd_info(int argc, char **argv);
