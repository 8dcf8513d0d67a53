// rocmforge ab: the same model on two configs or backends, interleaved in one process.
#pragma once

int cmd_ab(int argc, char **argv);
